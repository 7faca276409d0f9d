package opasort_test

import (
	"bytes"
	"context"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/wasm/opasort"
)

func policyWasm(t *testing.T, ep, rego string) []byte {
	t.Helper()
	c := compile.New().WithTarget(compile.TargetWasm).WithEntrypoints(ep).
		WithFS(fstest.MapFS{"p.rego": {Data: []byte(rego)}}).WithPaths("p.rego")
	if err := c.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c.Bundle().WasmModules[0].Raw
}

// A policy that sorts nothing has no opa_array_sort: nothing to replace.
func TestRewriteLeavesAModuleWithoutSort(t *testing.T) {
	raw := policyWasm(t, "p/x", "package p\n\nx := 1\n")
	out, err := opasort.Rewrite(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, raw) {
		t.Error("a module without opa_array_sort was changed")
	}
}

// A policy that sorts gets the merge sort.
func TestRewriteReplacesTheSort(t *testing.T) {
	raw := policyWasm(t, "p/x", "package p\n\nx := sort(input.xs)\n")
	out, err := opasort.Rewrite(raw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, raw) {
		t.Error("the sort was not replaced")
	}
}
