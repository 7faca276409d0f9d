package wasm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aclc-dev/aclc/wasm"
)

// TestHeapStable pins that the per-evaluation heap is reset: after 200,000
// evaluations the instance memory is no larger than after the first one.
func TestHeapStable(t *testing.T) {
	b := buildWasmBundle(t, map[string]string{"p.rego": benchPolicy + `
msg := concat(" ", [input.user, input.action, lower(input.user)])
`}, benchData, "authz/allow", "authz/msg")
	p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1))
	ctx := context.Background()
	allow, _ := p.Entrypoint("authz/allow")
	msg, _ := p.Entrypoint("authz/msg")
	if _, err := allow.Eval(ctx, []byte(`{"user":"alice","action":"write"}`)); err != nil {
		t.Fatal(err)
	}
	first, err := wasm.InstancePages(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	n := 200000
	for i := range n {
		in := fmt.Appendf(nil, `{"user":"user%d","action":"read"}`, i)
		if _, err := allow.Eval(ctx, in); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if _, err := msg.Eval(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	last, err := wasm.InstancePages(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if last[0] > first[0] {
		t.Fatalf("memory grew from %d to %d pages over %d evaluations", first[0], last[0], n)
	}
}
