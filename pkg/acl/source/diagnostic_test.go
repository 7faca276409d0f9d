package source

import (
	"reflect"
	"testing"
)

func TestDiagnosticString(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"a line is given after the file", Diagnostic{File: "q.yaml", Line: 3, Code: "dropped-name", Msg: "m"}, "q.yaml:3: warning: dropped-name: m"},
		{"an unknown line is left out", Diagnostic{File: "q.yaml", Code: "root-no-acl", Msg: "m"}, "q.yaml: warning: root-no-acl: m"},
		{"a column follows the line", Diagnostic{File: "c.yaml", Line: 6, Column: 3, Code: "bypass-auth", Msg: "m"}, "c.yaml:6:3: warning: bypass-auth: m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSortDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Diagnostic
		want []Diagnostic
	}{
		{"warnings are in line order",
			[]Diagnostic{{File: "s", Line: 9}, {File: "s", Line: 2}, {File: "s"}},
			[]Diagnostic{{File: "s"}, {File: "s", Line: 2}, {File: "s", Line: 9}}},
		{"the source's own warnings come before those of the files it names",
			[]Diagnostic{{File: "security.tcl", Line: 1}, {File: "s", Line: 7}},
			[]Diagnostic{{File: "s", Line: 7}, {File: "security.tcl", Line: 1}}},
		{"warnings on one line keep their order",
			[]Diagnostic{{File: "s", Line: 4, Code: "b"}, {File: "s", Line: 4, Code: "a"}},
			[]Diagnostic{{File: "s", Line: 4, Code: "b"}, {File: "s", Line: 4, Code: "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			SortDiagnostics(tc.in, "s")
			if !reflect.DeepEqual(tc.in, tc.want) {
				t.Errorf("got %v, want %v", tc.in, tc.want)
			}
		})
	}
}
