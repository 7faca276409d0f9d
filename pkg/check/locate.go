package check

import (
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Locator finds whether an aclc:ignore comment silences a diagnostic.
// Files are read once. Positions are the diagnostics' own: every error and
// warning carries its line and column from where it was produced.
type Locator struct {
	files map[string][]string
}

// NewLocator returns a Locator that reads the sources from their files;
// stdin, when not nil, gives the text of those named by the keys (the
// source read from standard input, which cannot be read again).
func NewLocator(stdin map[string][]byte) *Locator {
	l := &Locator{files: map[string][]string{}}
	for name, data := range stdin {
		l.files[name] = splitLines(data)
	}
	return l
}

func splitLines(data []byte) []string {
	if data == nil {
		return nil
	}
	return strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
}

// lines returns the lines of a source file, or nil for what is not a
// readable regular file (a directory, "(YuniKorn's default
// configuration)").
func (l *Locator) lines(file string) []string {
	if ls, ok := l.files[file]; ok {
		return ls
	}
	data, _ := translate.ReadSource(file)
	ls := splitLines(data)
	l.files[file] = ls
	return ls
}

// line returns line n (1-based) of file, if there is one.
func (l *Locator) line(file string, n int) (string, bool) {
	ls := l.lines(file)
	if n < 1 || n > len(ls) {
		return "", false
	}
	return ls[n-1], true
}

func (l *Locator) warning(d source.Diagnostic) Diagnostic {
	return Diagnostic{File: d.File, Line: d.Line, Column: d.Column, Code: d.Code, Severity: SeverityWarning, Message: d.Msg}
}

// errorDiagnostics turns a load error into diagnostics: one for each
// located error it holds, with that error's code and position, or one for
// the whole error, located at the sources, when it holds none.
func (l *Locator) errorDiagnostics(names string, err error, consequence string) []Diagnostic {
	located := source.AllLocated(err)
	if len(located) == 0 {
		return []Diagnostic{{File: names, Code: CodeInvalidSource, Severity: SeverityError, Message: err.Error(), Consequence: consequence}}
	}
	out := make([]Diagnostic, 0, len(located))
	for _, e := range located {
		d := Diagnostic{File: e.File, Line: e.Line, Column: e.Column, Code: e.Code, Severity: SeverityError, Message: e.Msg, Consequence: consequence, loadError: true}
		if d.Code == "" {
			d.Code = CodeInvalidSource
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

// Ignored reports whether a "# aclc:ignore CODE" comment on the
// diagnostic's line, or on the line above, names its code.
func (l *Locator) Ignored(d Diagnostic) bool {
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
