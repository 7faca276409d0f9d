package logs

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/logging"
)

// Records below the level are dropped, in either format; OPA's logger
// keeps OPA's own level scale on the same handler.
func TestLevelsAndFormats(t *testing.T) {
	for _, format := range Formats {
		var buf bytes.Buffer
		h, err := NewHandler(&buf, format)
		if err != nil {
			t.Fatal(err)
		}
		l := New(h, slog.LevelWarn)
		l.Info("dropped")
		l.Warn("kept", "uid", "u-1")
		opa := OPA(h, slog.LevelInfo)
		opa.Debug("dropped too")
		opa.WithFields(map[string]any{"b": 2, "a": 1}).Info("from opa")
		out := buf.String()
		if strings.Contains(out, "dropped") || !strings.Contains(out, "kept") || !strings.Contains(out, "from opa") {
			t.Errorf("%s: %q", format, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var rec map[string]any
			if isJSON := json.Unmarshal([]byte(line), &rec) == nil; isJSON != (format == "json") {
				t.Errorf("%s: line %q", format, line)
			}
		}
		if opa.GetLevel() != logging.Info {
			t.Errorf("OPA level %v", opa.GetLevel())
		}
	}
	if _, err := NewHandler(nil, "xml"); err == nil {
		t.Error("xml accepted")
	}
	for _, s := range []string{"loud", "trace"} {
		if _, err := ParseLevel(s); err == nil {
			t.Errorf("level %q accepted", s)
		}
	}
}

// A message quoted from YuniKorn may hold a line break; each log record is
// still one line, in either format, and OneLine joins a message's lines.
func TestEveryMessageIsOneLine(t *testing.T) {
	const yk = "q.yaml:6:44: configured queue creation failed: \ninvalid quantity"
	for _, format := range Formats {
		var buf bytes.Buffer
		h, err := NewHandler(&buf, format)
		if err != nil {
			t.Fatal(err)
		}
		l := New(h, slog.LevelInfo)
		l.Error(yk, "error", yk)
		OPA(h, slog.LevelInfo).WithFields(map[string]any{"err": yk}).Error("%s", yk)
		if lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); len(lines) != 2 {
			t.Errorf("%s: %d lines for two records:\n%s", format, len(lines), buf.String())
		}
	}
	for in, want := range map[string]string{
		yk:                "q.yaml:6:44: configured queue creation failed: invalid quantity",
		"a\r\nb\n\n  c  ": "a b c",
		"one line":        "one line",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
