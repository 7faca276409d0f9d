package check

import (
	"strings"
	"testing"
)

// An aclc:ignore comment names codes separated by commas or spaces; a
// comment spelled otherwise names none.
func TestIgnoreCodes(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"submitacl: a  # aclc:ignore dropped-name", []string{"dropped-name"}},
		{"# aclc:ignore comma-space, cannot-narrow", []string{"comma-space", "cannot-narrow"}},
		{"# aclc: ignore dropped-name", nil},
		{"submitacl: a", nil},
	}
	for _, tt := range tests {
		got := ignoreCodes(tt.line)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: %q, want %q", tt.line, got, tt.want)
		}
	}
}
