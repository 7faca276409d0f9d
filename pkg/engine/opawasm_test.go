package engine_test

import (
	"context"
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
	c := compile.New().
		WithTarget(compile.TargetWasm).
		WithEntrypoints("x/valid").
		WithFS(fstest.MapFS{"x.rego": {Data: []byte("package x\n\nvalid := json.is_valid(input.v)\n")}}).
		WithPaths(".")
	if err := c.Build(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := engine.NewOPAWasm(ctx, c.Bundle(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
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
