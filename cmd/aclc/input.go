package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/schemas"
)

// checkInput refuses an input that is not one JSON document, naming the
// line and column where it goes wrong, and an input of a decision with an
// input schema with a key its schema does not name: a misspelled key
// would otherwise be read as absent, and the decision would deny for a
// reason that does not name it (unknown action ""). The admission
// decisions read the API server's AdmissionReview, whose fields are
// Kubernetes', and are not checked.
func checkInput(ep string, raw []byte) error {
	v, err := decodeInput(raw)
	if err != nil {
		return err
	}
	d, ok := translate.LookupDecision(ep)
	if !ok || d.Admission || d.Input == "" {
		return nil
	}
	name := d.Input
	b, err := fs.ReadFile(schemas.FS, name)
	if err != nil {
		return err
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		return fmt.Errorf("schema %s: %w", name, err)
	}
	return unknownKey(schema, v, "")
}

// inputSyntaxError is where an input stops being one JSON document: line
// and column 1-based, columns counted in characters.
type inputSyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *inputSyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// decodeInput decodes one JSON document.
func decodeInput(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		// One document: anything after it but space is an error too.
		end := dec.InputOffset()
		var extra any
		if err = dec.Decode(&extra); err == io.EOF {
			return v, nil
		} else if err == nil {
			rest := raw[end:]
			next := end + int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))) + 1
			return nil, syntaxErrorAt(raw, next, "more than one JSON document")
		}
	}
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return nil, syntaxErrorAt(raw, syn.Offset, syn.Error())
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(raw)) == 0:
		return nil, errors.New("no JSON input")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return nil, syntaxErrorAt(raw, int64(len(raw)), "unexpected end of JSON input")
	}
	return nil, err
}

// syntaxErrorAt locates msg at the character before byte offset off,
// where encoding/json says it found the error.
func syntaxErrorAt(raw []byte, off int64, msg string) *inputSyntaxError {
	off = min(max(off, 0), int64(len(raw)))
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return &inputSyntaxError{Line: line, Column: max(col, 1), Msg: msg}
}

// unknownKey returns an error naming the first key, in sorted order, of an
// object of v that schema lists properties for and does not name; objects
// whose schema allows other properties are not checked.
func unknownKey(schema map[string]any, v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		props, ok := schema["properties"].(map[string]any)
		if !ok {
			return nil
		}
		extra, set := schema["additionalProperties"]
		open := set && extra != false
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub, known := props[k].(map[string]any)
			if !known {
				if open {
					continue
				}
				return fmt.Errorf("unknown key %q (want %s)", at+k, orList(sortedKeys(props)))
			}
			if err := unknownKey(sub, v[k], at+k+"."); err != nil {
				return err
			}
		}
	case []any:
		items, ok := schema["items"].(map[string]any)
		if !ok {
			return nil
		}
		for i, e := range v {
			if err := unknownKey(items, e, fmt.Sprintf("%s[%d].", strings.TrimSuffix(at, "."), i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
