package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// locator finds where in the source files a diagnostic belongs, and
// whether an aclc:ignore comment there silences it. Files are read once.
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

// locate fills in the column of a located diagnostic: where the line's
// text starts, past the indentation and a list dash.
func (l *locator) locate(d checkDiagnostic) checkDiagnostic {
	if d.Line > 0 && d.Column == 0 {
		if text, ok := l.line(d.File, d.Line); ok {
			trimmed := strings.TrimLeft(text, " \t")
			trimmed = strings.TrimLeft(strings.TrimPrefix(trimmed, "- "), " ")
			d.Column = len(text) - len(trimmed) + 1
		}
	}
	return d
}

func (l *locator) warning(d source.Diagnostic) checkDiagnostic {
	return l.locate(checkDiagnostic{File: d.File, Line: d.Line, Code: d.Code, Severity: severityWarning, Message: d.Msg})
}

// errorLocation is the "file:line[:column]: " an error message starts with.
var errorLocation = regexp.MustCompile(`^(.+?):(\d+)(?::(\d+))?: `)

// errorDiagnostic turns a load error into a diagnostic, taking its
// location from the message's "file:line:column: " prefix when it has one.
func (l *locator) errorDiagnostic(names, code, msg, consequence string) checkDiagnostic {
	d := checkDiagnostic{File: names, Code: code, Severity: severityError, Message: msg, Consequence: consequence}
	if m := errorLocation.FindStringSubmatch(msg); m != nil {
		d.File = m[1]
		d.Line, _ = strconv.Atoi(m[2])
		d.Column, _ = strconv.Atoi(m[3])
		d.Message = msg[len(m[0]):]
		return l.locate(d)
	}
	return d
}

// admissionKey is an admission setting named in a message.
var admissionKey = regexp.MustCompile(`admissionController\.[A-Za-z.]*[A-Za-z]`)

// admissionWarning locates a warning about the admission settings at the
// key it names, or at the first admission key of the files when it names
// none (or one the configuration leaves at YuniKorn's default).
func (l *locator) admissionWarning(admissionFile string, files []string, code, msg string) checkDiagnostic {
	d := checkDiagnostic{File: admissionFile, Code: code, Severity: severityWarning, Message: msg}
	for _, key := range []string{admissionKey.FindString(msg), "admissionController."} {
		if key == "" {
			continue
		}
		for _, f := range files {
			if st, err := os.Stat(filepath.Join(f, key)); err == nil && !st.IsDir() && key != "admissionController." {
				// A ConfigMap mounted as a directory: one file per key.
				d.File, d.Line, d.Column = filepath.Join(f, key), 1, 1
				return d
			}
			for i, text := range l.lines(f) {
				if col := keyColumn(text, key); col > 0 {
					d.File, d.Line, d.Column = f, i+1, col
					return d
				}
			}
		}
	}
	return d
}

// keyColumn is the 1-based column where key starts a YAML key on the line
// (quoted or not; a prefix ending in a dot matches any key under it), or 0.
func keyColumn(text, key string) int {
	trimmed := strings.TrimLeft(text, " \t")
	if strings.HasPrefix(trimmed, "#") {
		return 0
	}
	rest := strings.TrimLeft(trimmed, `"'`)
	if !strings.HasPrefix(rest, key) {
		return 0
	}
	after := strings.TrimLeft(rest[len(key):], `"'`)
	if !strings.HasSuffix(key, ".") && !strings.HasPrefix(after, ":") {
		return 0
	}
	return len(text) - len(trimmed) + 1
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
