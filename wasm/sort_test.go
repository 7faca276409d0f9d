package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/aclc-dev/aclc/wasm"
	"github.com/aclc-dev/aclc/wasm/opasort"
)

// sortModule compiles, as OPA compiles a query to Wasm, the sorts a policy
// makes: of an array, of a set, and of an object's keys.
func sortModule(t testing.TB) []byte {
	t.Helper()
	const module = `package s

arr := sort(input)

set := sort({x | some x in input})

keys := sort(object.keys({k: true | some x in input; k := json.marshal(x)}))

out := [arr, set, keys]
`
	return buildWasmBundle(t, map[string]string{"s.rego": module}, "", "s/out")
}

// randomValues returns n JSON values of mixed types, with repeats and
// numbers that compare equal but print differently (1 and 1.0).
func randomValues(r *rand.Rand, n int) string {
	vals := make([]string, n)
	for i := range vals {
		switch r.IntN(8) {
		case 0:
			vals[i] = strconv.Itoa(r.IntN(20))
		case 1:
			vals[i] = strconv.Itoa(r.IntN(20)) + ".0"
		case 2:
			vals[i] = strconv.Quote(strings.Repeat(string(rune('a'+r.IntN(4))), r.IntN(4)))
		case 3:
			vals[i] = fmt.Sprintf(`[%d,"%c"]`, r.IntN(3), 'a'+r.IntN(3))
		case 4:
			vals[i] = fmt.Sprintf(`{"k%d":%d}`, r.IntN(3), r.IntN(3))
		case 5:
			vals[i] = []string{"null", "true", "false"}[r.IntN(3)]
		default:
			vals[i] = strconv.Quote(strconv.Itoa(r.IntN(1000)))
		}
	}
	return "[" + strings.Join(vals, ",") + "]"
}

// TestMergeSortOrdersAsInsertionSort: the merge sort gives, byte for byte,
// the order of the C library's insertion sort on arrays, sets and object
// keys of every type, with repeats and equal numbers of different
// spellings (both sorts are stable).
func TestMergeSortOrdersAsInsertionSort(t *testing.T) {
	ctx := context.Background()
	module := sortModule(t)
	cfg := wasm.WithInterpreter(wasm.NewConfig().WithPoolSize(1))
	merge, err := wasm.Load(ctx, module, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer merge.Close(ctx)
	insertion, err := wasm.Load(ctx, module, wasm.WithoutSortRewrite(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer insertion.Close(ctx)
	eps := merge.Entrypoints()
	if len(eps) != 1 {
		t.Fatalf("entry points %v", eps)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		input := []byte(randomValues(r, r.IntN(40)))
		got, gerr := merge.Eval(ctx, eps[0], input)
		want, werr := insertion.Eval(ctx, eps[0], input)
		if gerr != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d, input %s:\nmerge sort:     %s %v\ninsertion sort: %s %v", i, input, got, gerr, want, werr)
		}
	}
	// An already rewritten module is rewritten to the same bytes.
	once, err := opasort.Rewrite(wasmOf(t, module))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := opasort.Rewrite(once)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(once, twice) {
		t.Error("rewriting a rewritten module changed it")
	}
}

// TestMergeSortIsNotQuadratic: sorting four times as many distinct strings
// takes about four times as many comparisons (n log n), not sixteen times
// (the insertion sort on hash order). Comparisons are counted, not timed.
func TestMergeSortIsNotQuadratic(t *testing.T) {
	ctx := context.Background()
	b := buildWasmBundle(t, map[string]string{"s.rego": "package s\n\nn := count(sort({x | some x in input}))\n"}, "", "s/n")
	compares := func(cfg wasm.Config, n int) int64 {
		var calls compareCounter
		p, err := wasm.Load(ctx, b, cfg.WithPoolSize(1).WithFunctionListener(&calls))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(ctx)
		s := make([]string, n)
		for i := range s {
			s[i] = strconv.Quote(fmt.Sprintf("k%07d", (i*7919)%n))
		}
		out, err := p.Eval(ctx, "s/n", []byte("["+strings.Join(s, ",")+"]"))
		var got int
		if err != nil || json.Unmarshal(out, &got) != nil || got != n {
			t.Fatalf("sorted %s, want %d elements (%v)", out, n, err)
		}
		return calls.n.Load()
	}
	cfg := wasm.WithInterpreter(wasm.NewConfig())
	small, large := compares(cfg, 1000), compares(cfg, 4000)
	t.Logf("comparisons: 1,000 elements %d, 4,000 elements %d (%.1fx)", small, large, float64(large)/float64(small))
	if float64(large) > 6*float64(small) {
		t.Errorf("sorting 4x the elements made %.1fx the comparisons; want about 4-5x (n log n)", float64(large)/float64(small))
	}
	// The same count on the insertion sort shows what the test guards.
	if old := compares(wasm.WithoutSortRewrite(cfg), 1000); old < 10*small {
		t.Errorf("the insertion sort made %d comparisons for 1,000 elements, the merge sort %d: the test no longer tells them apart", old, small)
	}
}

// compareCounter counts the calls of opa_value_compare.
type compareCounter struct{ n atomic.Int64 }

func (c *compareCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.Name() != "opa_value_compare" {
		return nil
	}
	return c
}

func (c *compareCounter) Before(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
	c.n.Add(1)
}

func (c *compareCounter) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (c *compareCounter) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// wasmOf returns the policy.wasm of a bundle.
func wasmOf(t *testing.T, b []byte) []byte {
	t.Helper()
	br, err := bundle.NewReader(bytes.NewReader(b)).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(br.WasmModules) != 1 {
		t.Fatalf("%d Wasm modules in the bundle", len(br.WasmModules))
	}
	return br.WasmModules[0].Raw
}
