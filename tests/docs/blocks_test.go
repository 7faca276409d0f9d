package docs

import (
	"reflect"
	"testing"
)

// TestBlocksAreTheShellTaggedFences: only fences tagged sh, bash, shell or
// console are command blocks; their text is kept as written.
func TestBlocksAreTheShellTaggedFences(t *testing.T) {
	md := "intro\n```sh\necho a\n```\n```yaml\nk: v\n```\n```\nplain\n```\n```console\n$ echo b\nb\n```\n"
	got := Blocks("x.md", md)
	want := []Block{{File: "x.md", Line: 2, Text: "echo a\n"}, {File: "x.md", Line: 11, Text: "$ echo b\nb\n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Blocks = %#v, want %#v", got, want)
	}
}

// TestStepsContinueAfterPipesAndBackslashes: a command goes on after a
// trailing \, |, && or || (a comment after it does not count), and the lines
// below it up to the next "$ " are its output, without comments.
func TestStepsContinueAfterPipesAndBackslashes(t *testing.T) {
	b := Block{File: "x.md", Line: 10, Text: "$ echo '{}' |   # piped\n    cat\n{}\n# a note\n$ a \\\n  b && \\\n  c\nout 1\nout 2\n"}
	got := b.Steps()
	want := []Step{
		{Line: 11, Command: "echo '{}' |   # piped\n    cat", Output: []string{"{}"}},
		{Line: 15, Command: "a \\\n  b && \\\n  c", Output: []string{"out 1", "out 2"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Steps = %#v, want %#v", got, want)
	}
}

// TestOutputShownMatchesInOrderWithEllipses: every line shown appears in
// the output, in order, whole; "..." stands for any text.
func TestOutputShownMatchesInOrderWithEllipses(t *testing.T) {
	got := "noise\naclc serve: listening on http://127.0.0.1:8181 (bundle revision abc, read-only)\n{\"allow\": true}\n"
	tests := []struct {
		name  string
		shown []string
		ok    bool
	}{
		{"nothing shown", nil, true},
		{"whole lines in order", []string{"aclc serve: listening on http://127.0.0.1:8181 (bundle revision ..., read-only)", `{"allow": true}`}, true},
		{"out of order", []string{`{"allow": true}`, "noise"}, false},
		{"a part of a line is not the line", []string{"listening"}, false},
		{"an ellipsis at both ends", []string{"...listening..."}, true},
		{"regexp characters are literal", []string{"{.allow.: true}"}, false},
		{"trailing spaces do not count", []string{"noise   "}, true},
	}
	for _, tt := range tests {
		if ok, _ := Matches(tt.shown, got); ok != tt.ok {
			t.Errorf("%s: Matches = %v, want %v", tt.name, ok, tt.ok)
		}
	}
}
