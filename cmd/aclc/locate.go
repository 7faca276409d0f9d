package main

import (
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// locator finds whether an aclc:ignore comment silences a diagnostic.
// Files are read once. Positions are the diagnostics' own: every error and
// warning carries its line and column from where it was produced.
type locator struct {
	files map[string][]string
}

func newLocator() *locator { return &locator{files: map[string][]string{}} }

// lines returns the lines of a source file, or nil for what is not a
// readable regular file (a directory, "(YuniKorn's default
// configuration)").
func (l *locator) lines(file string) []string {
	if ls, ok := l.files[file]; ok {
		return ls
	}
	var data []byte
	if file == stdinName {
		data = stdinData
	} else {
		data, _ = translate.ReadSource(file)
	}
	var ls []string
	if data != nil {
		ls = strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	}
	l.files[file] = ls
	return ls
}

// line returns line n (1-based) of file, if there is one.
func (l *locator) line(file string, n int) (string, bool) {
	ls := l.lines(file)
	if n < 1 || n > len(ls) {
		return "", false
	}
	return ls[n-1], true
}

func (l *locator) warning(d source.Diagnostic) checkDiagnostic {
	return checkDiagnostic{File: d.File, Line: d.Line, Column: d.Column, Code: d.Code, Severity: severityWarning, Message: d.Msg}
}

// errorDiagnostics turns a load error into diagnostics: one for each
// located error it holds, with that error's code and position, or one for
// the whole error, located at the sources, when it holds none.
func (l *locator) errorDiagnostics(names string, err error, consequence string) []checkDiagnostic {
	located := source.AllLocated(err)
	if len(located) == 0 {
		return []checkDiagnostic{{File: names, Code: codeInvalidSource, Severity: severityError, Message: err.Error(), Consequence: consequence}}
	}
	out := make([]checkDiagnostic, 0, len(located))
	for _, e := range located {
		d := checkDiagnostic{File: e.File, Line: e.Line, Column: e.Column, Code: e.Code, Severity: severityError, Message: e.Msg, Consequence: consequence, loadError: true}
		if d.Code == "" {
			d.Code = codeInvalidSource
		}
		if d.Line == 0 {
			// A position without a line stays in the message, which names
			// the file, as the error itself reads.
			d.File, d.Column, d.Message = names, 0, e.String()
		}
		out = append(out, d)
	}
	return out
}

// ignored reports whether a "# aclc:ignore CODE" comment on the
// diagnostic's line, or on the line above, names its code.
func (l *locator) ignored(d checkDiagnostic) bool {
	for _, n := range []int{d.Line, d.Line - 1} {
		if text, ok := l.line(d.File, n); ok && slices.Contains(ignoreCodes(text), d.Code) {
			return true
		}
	}
	return false
}

// ignoreCodes returns the codes an aclc:ignore comment on the line names.
func ignoreCodes(text string) []string {
	i := strings.Index(text, "#")
	if i < 0 {
		return nil
	}
	comment := strings.TrimSpace(text[i+1:])
	rest, ok := strings.CutPrefix(comment, "aclc:ignore")
	if !ok {
		return nil
	}
	return strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}
