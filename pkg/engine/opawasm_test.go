package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/pkg/engine"
)

// TestOPAWasmRecoversFromTrap: OPA's Wasm json.is_valid frees a value it
// does not own when the text is true or false, and the instance traps
// (opa_json_writer_emit_string, out of bounds) on this or a later call. OPA's
// SDK hands the broken instance out again, so every later evaluation on it
// failed. The engine must never reuse an instance whose evaluation failed.
func TestOPAWasmRecoversFromTrap(t *testing.T) {
	ctx := context.Background()
	e := openOPAWasm(t, "x/valid", "package x\n\nvalid := json.is_valid(input.v)\n")
	trapped := false
	for i := range 8 {
		for _, v := range []string{"true", "false"} {
			if _, err := e.Eval(ctx, "x/valid", []byte(`{"v":"`+v+`"}`)); err != nil {
				trapped = true
			}
		}
		// Every resolver, broken or not, answers the next evaluations.
		for range 4 {
			out, err := e.Eval(ctx, "x/valid", []byte(`{"v":"{\"a\":1}"}`))
			if err != nil {
				t.Fatalf("round %d: evaluation after a trap: %v", i, err)
			}
			if string(out) != "true" {
				t.Fatalf("round %d: got %s, want true", i, out)
			}
		}
	}
	if !trapped {
		t.Log("json.is_valid no longer traps on true/false in this OPA version")
	}
}

// TestOPAWasmInputIsDecodedAsEncodingJSONDecodesIt: the engine hands OPA's
// Wasm engine the request's own bytes where the guest parses them as
// encoding/json does, and takes Go's decoder otherwise; either way the
// policy sees what native sees.
func TestOPAWasmInputIsDecodedAsEncodingJSONDecodesIt(t *testing.T) {
	ctx := context.Background()
	e := openOPAWasm(t, "x/echo", "package x\n\necho := input\n")
	for _, tt := range []struct {
		name, input string
		// guestFails: OPA's Wasm guest mis-decodes code points from
		// U+20000 up; the engine must answer an error, never another value.
		guestFails bool
	}{
		{"plain object", `{"a": [1, 2.5, "x", true, null, {"b": {}}]}`, false},
		{"white space around", " \n{\"a\":1}\t", false},
		{"duplicate keys: the last wins", `{"a":1,"a":2}`, false},
		{"escapes", `{"a":"\"\\\/\b\f\n\r\t\u00e9\u2028<>&"}`, false},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, false},
		{"lone surrogate", `{"a":"\ud800"}`, false},
		{"upper-case surrogate escape", `{"a":"\uD83D\uDE00"}`, false},
		{"code point above U+20000", `{"a":"\uDBFF\uDFFF"}`, true},
		{"invalid UTF-8", "{\"a\":\"\xff\xfe\"}", false},
		{"large number", `{"a":1e400}`, false},
		{"deep", strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.Eval(ctx, "x/echo", []byte(tt.input))
			if err != nil {
				if tt.guestFails {
					return
				}
				t.Fatal(err)
			}
			want, err := decodeNumbers([]byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeNumbers(out)
			if err != nil {
				t.Fatalf("output %s: %v", out, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %s, want %v", out, want)
			}
		})
	}
	for _, bad := range []string{``, `{`, `{"a":1}x`, `{"a":01}`, `[1,]`} {
		if out, err := e.Eval(ctx, "x/echo", []byte(bad)); err == nil {
			t.Errorf("input %q: got %s, want an error", bad, out)
		}
	}
}

func decodeNumbers(b []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// openOPAWasm compiles module x.rego to Wasm with one entry point and opens
// OPA's Wasm engine on it, closed when the test ends.
func openOPAWasm(t *testing.T, entrypoint, module string) *engine.OPAWasmEngine {
	t.Helper()
	ctx := context.Background()
	c := compile.New().
		WithTarget(compile.TargetWasm).
		WithEntrypoints(entrypoint).
		WithFS(fstest.MapFS{"x.rego": {Data: []byte(module)}}).
		WithPaths(".")
	if err := c.Build(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := engine.NewOPAWasm(ctx, c.Bundle(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(ctx) })
	return e
}
