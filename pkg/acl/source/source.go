// Package source holds what every source parser shares: the located errors
// it returns ("file:line:col: message", alone or as a list, matched with
// errors.Is by the parsing package's own sentinel, each with the stable code
// of the rule it breaks, read as values through Located), the reading of a
// YAML source into JSON values indexed by JSON pointer with its schema check
// phrased for people, and the warnings about sources that load, which share
// the codes' namespace.
package source

import (
	"bytes"
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Kind ties located errors to the sentinel of the package that reports
// them (e.g. yunikorn.ErrInvalidConfig).
type Kind interface{ Sentinel() error }

// Error is an error located in a source file. K names the package's
// sentinel, which errors.Is matches.
type Error[K Kind] struct {
	// Code names the rule the source breaks, e.g. "duplicate-partition":
	// stable, so that programs and aclc:ignore-style tooling can match on
	// it. Warnings about the same rule share it.
	Code   string
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	// Value is the offending value as written in the source, when there is
	// one. Msg already mentions it; it is kept apart for programs.
	Value string
	Msg   string
}

// Error renders "file:line:col: msg", leaving out the parts that are unknown.
func (e *Error[K]) Error() string { return e.Located().String() }

// Located returns the error's code, position and text apart.
func (e *Error[K]) Located() Located {
	return Located{Code: e.Code, Location: Location{File: e.File, Line: e.Line, Column: e.Column}, Value: e.Value, Msg: e.Msg}
}

// Is makes every Error match its kind's sentinel.
func (e *Error[K]) Is(target error) bool {
	var k K
	return target == k.Sentinel()
}

// Errors is a list of located errors, in source order.
type Errors[K Kind] []*Error[K]

// Error renders one error per line, preceded by "N errors occurred:" when
// there is more than one (as OPA does).
func (es Errors[K]) Error() string {
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

// Is makes every Errors match its kind's sentinel.
func (es Errors[K]) Is(target error) bool {
	var k K
	return target == k.Sentinel()
}

// Unwrap exposes the single errors to errors.As.
func (es Errors[K]) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// SortAndCompact orders the errors by position and drops exact repeats,
// which arise when one node is reached through several YAML aliases.
func (es Errors[K]) SortAndCompact() Errors[K] {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
	seen := make(map[Error[K]]bool, len(es))
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

// Err returns nil, the single error, or the list.
func (es Errors[K]) Err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return es
}

// WithFile sets File on every error of kind K that has none.
func WithFile[K Kind](err error, file string) error {
	var list Errors[K]
	var one *Error[K]
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

// Rekind re-labels the located errors of kind From as errors of kind To,
// for a reader shared by several parsers (each caller's errors then match
// its own sentinel). Other errors pass through unchanged.
func Rekind[To, From Kind](err error) error {
	var list Errors[From]
	var one *Error[From]
	switch {
	case errors.As(err, &list):
		out := make(Errors[To], len(list))
		for i, e := range list {
			out[i] = (*Error[To])(e)
		}
		return out
	case errors.As(err, &one):
		return (*Error[To])(one)
	}
	return err
}

// Location is a position in a source file; Line and Column are 1-based,
// 0 when unknown.
type Location struct {
	File         string
	Line, Column int
}

// Located is a located error without its Go type: what a command reports
// about it (as OPA's ast.Error: code, location, message).
type Located struct {
	Code string
	Location
	// Value is the offending value as written, when there is one.
	Value string
	// Msg is the message without the location.
	Msg string
}

// String renders "file:line:col: msg", leaving out the parts that are
// unknown, as the error it came from reads.
func (e Located) String() string {
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

// LocatedError is an error that knows its code and position. Every Error
// is one, whatever its kind, so a caller outside the parsing packages
// finds it with errors.As, or all of a list with AllLocated.
type LocatedError interface {
	error
	Located() Located
}

// AllLocated returns the located errors err is or wraps, in order: one for
// a single error, each of a list; nil when err holds none. Its callers
// render each with its own location, so only wrappers that add no text
// (sentinel markers, %w alone) should stand between err and them.
func AllLocated(err error) []Located {
	switch e := err.(type) {
	case nil:
		return nil
	case LocatedError:
		return []Located{e.Located()}
	case interface{ Unwrap() []error }:
		var out []Located
		for _, inner := range e.Unwrap() {
			out = append(out, AllLocated(inner)...)
		}
		return out
	case interface{ Unwrap() error }:
		return AllLocated(e.Unwrap())
	}
	return nil
}

// TextColumn returns the 1-based column where the text of line (1-based)
// of data starts, past its indentation and a list dash: where an error or
// a warning that its parser reports with a line only points (a YAML
// syntax error, an entry known by its line). It is 0 when data has no
// such line.
func TextColumn(data []byte, line int) int {
	if line < 1 {
		return 0
	}
	for i := 1; i < line; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return 0
		}
		data = data[nl+1:]
	}
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		data = data[:nl]
	}
	text := strings.TrimSuffix(string(data), "\r")
	trimmed := strings.TrimLeft(text, " \t")
	trimmed = strings.TrimLeft(strings.TrimPrefix(trimmed, "- "), " ")
	return len(text) - len(trimmed) + 1
}
