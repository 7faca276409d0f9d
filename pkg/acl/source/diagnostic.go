package source

import (
	"fmt"
	"sort"
)

// Diagnostic is a warning about a source that loads but probably does not
// do what its author meant.
type Diagnostic struct {
	File   string
	Line   int
	Column int // 1-based; 0 when unknown
	// Code is a stable identifier of the trap, e.g. "dropped-name".
	Code string
	Msg  string
}

// String renders "file:line[:column]: warning: code: msg".
func (d Diagnostic) String() string {
	loc := d.File
	if d.Line > 0 {
		loc = fmt.Sprintf("%s:%d", d.File, d.Line)
		if d.Column > 0 {
			loc = fmt.Sprintf("%s:%d", loc, d.Column)
		}
	}
	return fmt.Sprintf("%s: warning: %s: %s", loc, d.Code, d.Msg)
}

// SortDiagnostics orders warnings by line, those about file (the source
// itself) before those about the files it names, such as a security.tcl.
// Warnings on one line keep their order.
func SortDiagnostics(ds []Diagnostic, file string) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].File != ds[j].File {
			return ds[i].File == file
		}
		return ds[i].Line < ds[j].Line
	})
}
