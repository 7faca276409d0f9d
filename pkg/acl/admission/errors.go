package admission

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// SourceError is an error located in a settings file.
type SourceError struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	// Value is the offending value as written, when there is one. Msg
	// already mentions it; it is kept apart for programs.
	Value string
	Msg   string
}

// Error renders "file:line:col: msg", leaving out the parts that are unknown.
func (e *SourceError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if b.Len() == 0 {
		return e.Msg
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes every SourceError match ErrInvalidSettings.
func (e *SourceError) Is(target error) bool { return target == ErrInvalidSettings }

// SourceErrors is a list of located errors, in source order.
type SourceErrors []*SourceError

// Error renders one error per line, preceded by "N errors occurred:" when
// there is more than one (as OPA does).
func (es SourceErrors) Error() string {
	switch len(es) {
	case 0:
		return "no errors"
	case 1:
		return es[0].Error()
	}
	lines := make([]string, 0, len(es)+1)
	lines = append(lines, strconv.Itoa(len(es))+" errors occurred:")
	for _, e := range es {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// Is makes every SourceErrors match ErrInvalidSettings.
func (es SourceErrors) Is(target error) bool { return target == ErrInvalidSettings }

// Unwrap exposes the single errors to errors.As.
func (es SourceErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortAndCompact orders the errors by position and drops exact repeats,
// which arise when one node is reached through several YAML aliases.
func (es SourceErrors) sortAndCompact() SourceErrors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
	seen := make(map[SourceError]bool, len(es))
	out := es[:0]
	for _, e := range es {
		if seen[*e] {
			continue
		}
		seen[*e] = true
		out = append(out, e)
	}
	return out
}

// err returns nil, the single error, or the list.
func (es SourceErrors) err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return es
}

// withFile sets File on every error that has none.
func withFile(err error, file string) error {
	var list SourceErrors
	var one *SourceError
	switch {
	case errors.As(err, &list):
		for _, e := range list {
			if e.File == "" {
				e.File = file
			}
		}
	case errors.As(err, &one):
		if one.File == "" {
			one.File = file
		}
	}
	return err
}

// located builds a SourceError at a node.
func located(n *yaml.Node, value, msg string) *SourceError {
	e := &SourceError{Value: value, Msg: msg}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}
