// Package eval asks an engine for decisions as aclc eval does: an input
// checked against its decision's schema first, one JSON document or JSON
// lines in, decisions written with their keys sorted so that every engine
// prints the same bytes, and verdicts counted for --fail.
package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/schemas"
)

// Verdicts tallies decisions (aclc eval --fail and --fail-defined).
type Verdicts struct{ Allowed, Denied int }

// Add counts a decision (Allows).
func (v *Verdicts) Add(out []byte) {
	if Allows(out) {
		v.Allowed++
	} else {
		v.Denied++
	}
}

// Allows reports whether a decision allows: its allow (or an admission
// review's response.allowed) is true; an undefined decision, or one
// without such a field that is null, denies; a defined value of another
// kind allows.
func Allows(out []byte) bool {
	var d struct {
		Allow    *bool `json:"allow"`
		Response *struct {
			Allowed bool `json:"allowed"`
		} `json:"response"`
	}
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 || string(trimmed) == "null" || string(trimmed) == "{}" {
		return false
	}
	if json.Unmarshal(trimmed, &d) != nil {
		// Not an object: a defined value of another kind.
		return true
	}
	switch {
	case d.Allow != nil:
		return *d.Allow
	case d.Response != nil:
		return d.Response.Allowed
	}
	return true
}

// Canonical writes a decision with its object keys sorted, so every
// engine prints the same bytes (OPA's Wasm keeps the policy's key order).
// Strings are left unescaped beyond what JSON needs; numbers keep their
// text. Anything that does not decode is returned as it came.
func Canonical(out []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return out
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Lines answers one decision per input line, in order, each on its line
// of out, compact and canonical; a bad line gets {"error": ...} and the
// rest go on (failed then reports it). err is a failure to read in.
func Lines(ctx context.Context, eng engine.Engine, ep string, in io.Reader, out io.Writer, verdicts *Verdicts) (failed bool, err error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	w := bufio.NewWriter(out)
	defer w.Flush()
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var dec json.RawMessage
		var err error
		var syn *SyntaxError
		if err = CheckInput(ep, raw); errors.As(err, &syn) {
			// The column is the line's, leading space included.
			lead := utf8.RuneCount(sc.Bytes()) - utf8.RuneCount(bytes.TrimLeft(sc.Bytes(), " \t\r\n"))
			err = fmt.Errorf("line %d, column %d: %s", line, syn.Column+lead, syn.Msg)
		} else if err != nil {
			err = fmt.Errorf("line %d: %w", line, err)
		} else if dec, err = eng.Eval(ctx, ep, raw); err != nil {
			err = fmt.Errorf("line %d: %w", line, err)
		}
		if err != nil {
			failed = true
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			dec = b
		} else {
			verdicts.Add(dec)
		}
		w.Write(Canonical(dec))
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return failed, fmt.Errorf("read input: %w", err)
	}
	return failed, nil
}

// CheckInput refuses an input that is not one JSON document, naming the
// line and column where it goes wrong, and an input of a decision with an
// input schema with a key its schema does not name: a misspelled key
// would otherwise be read as absent, and the decision would deny for a
// reason that does not name it (unknown action ""). The admission
// decisions read the API server's AdmissionReview, whose fields are
// Kubernetes', and are not checked.
func CheckInput(ep string, raw []byte) error {
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

// SyntaxError is where an input stops being one JSON document: line
// and column 1-based, columns counted in characters.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
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
func syntaxErrorAt(raw []byte, off int64, msg string) *SyntaxError {
	off = min(max(off, 0), int64(len(raw)))
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return &SyntaxError{Line: line, Column: max(col, 1), Msg: msg}
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
