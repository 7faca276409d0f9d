package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/wasm"
)

const fuzzPolicy = `package fz

default allow := false

allow if {
	input.user == "alice"
	input.action in {"read", "write"}
}

allow if {
	some r in input.roles
	data.admins[r]
}

user := lower(input.user)

n := count(input.roles)

info := {"user": input.user, "roles": input.roles, "first": input.roles[0]}

prefixed if startswith(input.path, "/api")
`

var fuzzEntrypoints = []string{"fz/allow", "fz/user", "fz/n", "fz/info", "fz/prefixed"}

const fuzzData = `{"admins":{"root":true,"ops":true}}`

// FuzzEval feeds arbitrary input bytes to a compiled policy. Properties:
// Eval never panics; input that is not JSON is refused; for JSON input the
// result equals OPA topdown's whenever topdown evaluates without error, and
// the input the host writes in the module's layout, and the result it
// prints, equal the module's own parse and dump (the layout check fails
// the evaluation otherwise).
func FuzzEval(f *testing.F) {
	for _, s := range []string{
		`{"user":"alice","action":"read"}`,
		`{"user":"bob","roles":["ops","dev"],"path":"/api/x"}`,
		`{"user":"ALICE","action":"write","roles":[]}`,
		`{"roles":{"root":1}}`,
		`{"user":"\u00e9\n\"","roles":"str"}`,
		`{"roles":[1.5,-0,1e3,true,null,{"a":[]}]}`,
		`{"user":"\ud800","roles":["\ud83d\ude00"]}`,
		`{"user":"x","user":"alice","action":"read"}`,
		`{"roles":[1e400,123456789012345678901234567890,0.1,-0.0,1E+2]}`,
		`{"user":"\u0000a\u001f","path":"/api\/v1"}`,
		strings.Repeat("[", 200) + strings.Repeat("]", 200),
		"{\"user\":\"\xff\xfe\"}",
		`[]`, `null`, `"x"`, `12`, ``, `{`, `{"a":}`,
	} {
		f.Add([]byte(s))
	}
	modules := map[string]string{"fz.rego": fuzzPolicy}
	b, err := compileWasmBundle(modules, fuzzData, fuzzEntrypoints...)
	if err != nil {
		f.Fatal(err)
	}
	p, err := wasm.Load(context.Background(), b, wasm.WithLayoutCheck(wasm.NewConfig().WithPoolSize(2)))
	if err != nil {
		f.Fatal(err)
	}
	defer p.Close(context.Background())
	td := newTopdown(f, modules, fuzzData, fuzzEntrypoints...)

	f.Fuzz(func(t *testing.T, input []byte) {
		ctx := context.Background()
		valid := len(input) == 0 || json.Valid(input)
		for _, ep := range fuzzEntrypoints {
			got, gerr := p.Eval(ctx, ep, input)
			if !valid {
				if gerr == nil || !(strings.Contains(gerr.Error(), "not valid JSON") || strings.Contains(gerr.Error(), "nests deeper")) {
					t.Fatalf("%s: invalid JSON %q accepted: %s, %v", ep, input, got, gerr)
				}
				continue
			}
			if gerr != nil && strings.Contains(gerr.Error(), "not valid JSON") {
				t.Fatalf("%s: valid JSON %q refused: %v", ep, input, gerr)
			}
			if tooDeep(input) {
				if gerr == nil || !strings.Contains(gerr.Error(), "nests deeper") {
					t.Fatalf("%s: input nesting over 1000 levels: got %s, %v", ep, got, gerr)
				}
				continue
			}
			want, werr := td.eval(ep, input)
			if werr != nil && !errors.Is(werr, wasm.ErrUndefined) {
				continue // compare only what topdown evaluates
			}
			switch {
			case errors.Is(gerr, wasm.ErrUndefined) && errors.Is(werr, wasm.ErrUndefined):
			case gerr != nil || werr != nil:
				t.Fatalf("%s %q: wasm %s, %v; topdown %s, %v", ep, input, got, gerr, want, werr)
			default:
				if err := sameJSON(got, want); err != nil {
					t.Fatalf("%s %q: wasm %s, topdown %s: %v", ep, input, got, want, err)
				}
			}
		}
	})
}

// tooDeep reports whether JSON nests deeper than the host accepts.
func tooDeep(b []byte) bool {
	depth, maxDepth, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == '[' || c == '{'):
			depth++
			maxDepth = max(maxDepth, depth)
		case !inString && (c == ']' || c == '}'):
			depth--
		}
	}
	return maxDepth > 1000 // the host refuses deeper input
}

// sameJSON compares JSON texts, numbers by value at high precision.
func sameJSON(a, b []byte) error {
	va, err := decodeNumbers(a)
	if err != nil {
		return err
	}
	vb, err := decodeNumbers(b)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(va, vb) {
		return errors.New("values differ")
	}
	return nil
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return canonical(v)
}

func canonical(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 256, big.ToNearestEven)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return f.Text('g', 60), nil
	case []any:
		for i := range x {
			c, err := canonical(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	case map[string]any:
		for k := range x {
			c, err := canonical(x[k])
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	}
	return v, nil
}
