package main

import (
	"context"
	"testing"
)

// TestProfileCounts: the seed decision's guest calls and opa_malloc calls
// are counted, and the same for every decision and for a second load.
func TestProfileCounts(t *testing.T) {
	t.Chdir("../..")
	seed := newScenarios(100, 20, 20, true)[0]
	ctx := context.Background()
	var first *callProfile
	for range 2 {
		p, err := profileScenario(ctx, seed, 20)
		if err != nil {
			t.Fatal(err)
		}
		// The host writes the input and reads the result in the module's
		// layout: a decision is one heap reset and one eval, no parse, no
		// dump.
		if p.totalCalls() == 0 || p.calls("opa_malloc") == 0 || p.calls("eval") != 1 || p.calls("opa_heap_ptr_set") != 1 {
			t.Fatalf("calls per decision: %v in all, %v opa_malloc, %v eval, %v opa_heap_ptr_set; want some, some, 1 and 1", p.totalCalls(), p.calls("opa_malloc"), p.calls("eval"), p.calls("opa_heap_ptr_set"))
		}
		for _, fn := range []string{"opa_eval", "opa_value_parse", "opa_value_dump", "opa_json_dump"} {
			if n := p.calls(fn); n != 0 {
				t.Errorf("%s called %v times a decision, want 0", fn, n)
			}
		}
		// Steps: eval runs every call of a decision but the heap reset;
		// the entry rule runs inside eval, once, with fewer calls.
		step := func(name string) *fnStats {
			for _, f := range p.fns {
				if f.name == name || stepName(f.name) == name {
					return f
				}
			}
			t.Fatalf("no step %s", name)
			return nil
		}
		top, rule := step("eval"), step("data.yunikorn.queues.decision")
		if !top.step || !rule.step {
			t.Errorf("eval and the decision rule are not steps")
		}
		if got := float64(top.inclusive) / 20; got != p.totalCalls()-1 {
			t.Errorf("eval inclusive calls %v, want every call of the decision but the heap reset, %v", got, p.totalCalls()-1)
		}
		if got := float64(top.allocs) / 20; got != p.calls("opa_malloc") {
			t.Errorf("eval inclusive opa_malloc %v, want %v", got, p.calls("opa_malloc"))
		}
		if rule.calls != 20 || rule.inclusive <= rule.calls || rule.inclusive >= top.inclusive {
			t.Errorf("decision rule: %d calls, %d inclusive; eval %d inclusive: want 20 calls, and fewer inclusive than eval", rule.calls, rule.inclusive, top.inclusive)
		}
		if p.minCalls != p.maxCalls {
			t.Errorf("guest calls per decision vary from %d to %d", p.minCalls, p.maxCalls)
		}
		if first == nil {
			first = p
			continue
		}
		if p.totalCalls() != first.totalCalls() || p.calls("opa_malloc") != first.calls("opa_malloc") {
			t.Errorf("second load: %v calls, %v opa_malloc; first: %v, %v", p.totalCalls(), p.calls("opa_malloc"), first.totalCalls(), first.calls("opa_malloc"))
		}
	}
}
