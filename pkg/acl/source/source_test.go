package source

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

var errTest = errors.New("test sentinel")

type testKind struct{}

func (testKind) Sentinel() error { return errTest }

// A caller outside the parsing package reads code and position as values,
// through any wrapping that adds no text, one per error of a list.
func TestAllLocated(t *testing.T) {
	one := &Error[testKind]{Code: "duplicate-key", File: "q.yaml", Line: 2, Column: 1, Value: "k", Msg: "m"}
	two := &Error[testKind]{Code: "unknown-key", File: "q.yaml", Line: 4, Column: 9, Msg: "n"}
	want1 := Located{Code: "duplicate-key", Location: Location{File: "q.yaml", Line: 2, Column: 1}, Value: "k", Msg: "m"}
	want2 := Located{Code: "unknown-key", Location: Location{File: "q.yaml", Line: 4, Column: 9}, Msg: "n"}
	for _, tc := range []struct {
		name string
		err  error
		want []Located
	}{
		{"nil holds none", nil, nil},
		{"an error without a position holds none", errors.New("read q.yaml: no such file"), nil},
		{"one error", one, []Located{want1}},
		{"wrapped by %w", fmt.Errorf("%w", one), []Located{want1}},
		{"a list, in order", Errors[testKind]{one, two}, []Located{want1, want2}},
		{"a list behind a marker", errors.Join(errTest, Errors[testKind]{one, two}), []Located{want1, want2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AllLocated(tc.err); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AllLocated = %+v, want %+v", got, tc.want)
			}
		})
	}
	var le LocatedError
	if !errors.As(fmt.Errorf("%w", one), &le) || le.Located().Code != "duplicate-key" {
		t.Errorf("errors.As does not find the located error")
	}
}

// A located error reads as its Located renders it: the position's known
// parts, then the message.
func TestLocatedString(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Located
		want string
	}{
		{"file, line and column", Located{Location: Location{File: "q.yaml", Line: 4, Column: 9}, Msg: "m"}, "q.yaml:4:9: m"},
		{"no column", Located{Location: Location{File: "q.yaml", Line: 4}, Msg: "m"}, "q.yaml:4: m"},
		{"a file alone", Located{Location: Location{File: "dir/key"}, Msg: "m"}, "dir/key: m"},
		{"nothing but the message", Located{Msg: "m"}, "m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			e := &Error[testKind]{File: tc.l.File, Line: tc.l.Line, Column: tc.l.Column, Msg: tc.l.Msg}
			if e.Error() != tc.want {
				t.Errorf("Error() = %q, want %q", e.Error(), tc.want)
			}
		})
	}
}

// TextColumn points where the text of a line starts, as a message that
// knows only the line does.
func TestTextColumn(t *testing.T) {
	data := []byte("a: 1\n  b: 2\n  - c: 3\n\t- d\n-   e\r\nlast")
	tests := []struct {
		rule       string
		line, want int
	}{
		{"a line without indentation starts at 1", 1, 1},
		{"indentation is skipped", 2, 3},
		{"a list dash is skipped", 3, 5},
		{"a tab counts as one column", 4, 4},
		{"spaces after the dash and a CR are skipped", 5, 5},
		{"the last line has no newline", 6, 1},
		{"no line 0", 0, 0},
		{"no line past the end", 7, 0},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := TextColumn(data, tt.line); got != tt.want {
				t.Errorf("TextColumn(line %d) = %d, want %d", tt.line, got, tt.want)
			}
		})
	}
}
