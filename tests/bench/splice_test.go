package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpliceSectionReplacesOnlyItsSection pins that a section run on its
// own is appended once, replaced in place on the next run, and refused
// when its markers are broken, leaving the rest of the file as it was.
func TestSpliceSectionReplacesOnlyItsSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	if err := os.WriteFile(path, []byte("# Benchmarks\n\nfigures\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sec := func(body string) string { return configReviewBegin + "\n" + body + "\n" + configReviewEnd + "\n" }
	for _, body := range []string{"first run", "second run"} {
		if err := spliceSection(path, configReviewBegin, configReviewEnd, sec(body)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	if want := "# Benchmarks\n\nfigures\n\n" + sec("second run"); string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := os.WriteFile(path, []byte(configReviewEnd+"\n"+configReviewBegin+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := spliceSection(path, configReviewBegin, configReviewEnd, sec("x")); err == nil || !strings.Contains(err.Error(), "markers are broken") {
		t.Errorf("broken markers: %v", err)
	}
}
