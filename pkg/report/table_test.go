package report

import (
	"strings"
	"testing"
)

// A wrapped cell breaks at spaces and cuts a word longer than the width.
func TestWrapText(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"users sue (submitacl of root)", 40, []string{"users sue (submitacl of root)"}},
		{"users sue (submitacl of root)", 12, []string{"users sue", "(submitacl", "of root)"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
	}
	for _, tt := range tests {
		if got := wrapText(tt.in, tt.width); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("wrapText(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}
