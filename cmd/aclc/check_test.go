package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/ from the output")

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// check's text and JSON output, pinned: every diagnostic with its file,
// line, column, code, severity and message; errors with YuniKorn's
// consequence; warnings silenced by a comment counted as ignored.
func TestCheckGolden(t *testing.T) {
	tests := []struct {
		name, golden string
		code         int
		args         []string
	}{
		{"queue traps", "check/org", exitOK, []string{"../../examples/yunikorn/org.yaml"}},
		{"admission warnings are located at their keys", "check/admission", exitOK, []string{"../../examples/admission/configmap.yaml"}},
		{"an aclc:ignore comment silences its code on its line or the next", "check/ignore", exitOK, []string{"testdata/check/ignore.yaml"}},
		{"an invalid source is an error with its consequence", "check/invalid-key", exitError, []string{"testdata/check/invalid-key.yaml"}},
	}
	for _, tt := range tests {
		for _, format := range []string{"text", "json"} {
			t.Run(tt.name+" "+format, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "", append([]string{"check", "-o", format}, tt.args...)...)
				if code != tt.code {
					t.Errorf("exit %d, want %d; %s", code, tt.code, stderr)
				}
				golden(t, tt.golden+"."+format+".golden", stdout)
			})
		}
	}
}

// The JSON is what CI tools read: it parses, each diagnostic carries its
// location, and the summary agrees with the list and the exit status.
func TestCheckJSONParses(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "check", "-o", "json", "../../examples/admission/configmap.yaml")
	var res struct {
		Diagnostics []struct {
			File, Code, Severity, Message, Consequence string
			Line, Column                               int
		}
		Summary struct {
			Files                     []string
			Errors, Warnings, Ignored int
			OK                        bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if code != exitOK || !res.Summary.OK || res.Summary.Errors != 0 || res.Summary.Warnings != len(res.Diagnostics) || len(res.Diagnostics) == 0 {
		t.Errorf("exit %d, summary %+v, %d diagnostics", code, res.Summary, len(res.Diagnostics))
	}
	located := 0
	for _, d := range res.Diagnostics {
		if d.Severity != "warning" || d.Code == "" || d.Message == "" || d.File == "" {
			t.Errorf("incomplete diagnostic %+v", d)
		}
		if strings.Contains(d.Message, "admissionController.") {
			if d.Line == 0 || d.Column == 0 {
				t.Errorf("an admission warning without its line: %+v", d)
			}
			located++
		}
	}
	if located == 0 {
		t.Error("no admission warning located")
	}
	code, stdout, _ = runCLI(t, "", "check", "-o", "yaml", "testdata/check/invalid-key.yaml")
	if code != exitError || !strings.Contains(stdout, "severity: error") || !strings.Contains(stdout, "line: 5") || !strings.Contains(stdout, "column: 9") {
		t.Errorf("yaml: exit %d\n%s", code, stdout)
	}
}

// --fail-on warning fails a source with warnings; --ignore CODE leaves a
// code out, so it neither prints nor fails.
func TestCheckFailOnAndIgnore(t *testing.T) {
	org := "../../examples/yunikorn/org.yaml"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"warnings pass by default", []string{org}, exitOK, "ok (YuniKorn 1.9.0, 1 warning)"},
		{"warnings fail with --fail-on warning", []string{"--fail-on", "warning", org}, exitError, "failed (--fail-on warning) (YuniKorn 1.9.0, 1 warning)"},
		{"an ignored code does not fail", []string{"--fail-on", "warning", "--ignore", "dropped-name", org}, exitOK, "ok (YuniKorn 1.9.0, 0 warnings, 1 ignored)"},
		{"comma-separated codes", []string{"--ignore", "root-no-acl,dropped-name", org}, exitOK, "1 ignored"},
		{"an unknown --fail-on", []string{"--fail-on", "notice", org}, exitUsage, ""},
		{"an unknown --output", []string{"-o", "xml", org}, exitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"check"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stdout, tt.want) {
				t.Errorf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, stdout, stderr)
			}
		})
	}
}

// A count says its noun in the singular for one, as people write it:
// "1 warning", never "1 warnings".
func TestCountPluralises(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		noun   string
		plural []string
		want   string
	}{
		{"one is singular", 1, "warning", nil, "1 warning"},
		{"none is plural", 0, "warning", nil, "0 warnings"},
		{"two are plural", 2, "object", nil, "2 objects"},
		{"an irregular plural is given", 3, "ACL entry", []string{"ACL entries"}, "3 ACL entries"},
		{"an irregular singular", 1, "ACL entry", []string{"ACL entries"}, "1 ACL entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := count(tt.n, tt.noun, tt.plural...); got != tt.want {
				t.Errorf("count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
			}
		})
	}
}
