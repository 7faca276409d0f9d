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
		if p.totalCalls() == 0 || p.calls("opa_malloc") == 0 || p.calls("opa_eval") != 1 {
			t.Fatalf("calls per decision: %v in all, %v opa_malloc, %v opa_eval; want some, some and 1", p.totalCalls(), p.calls("opa_malloc"), p.calls("opa_eval"))
		}
		// Steps: opa_eval runs every call of a decision; the entry rule runs
		// inside eval, once, with fewer calls.
		step := func(name string) *fnStats {
			for _, f := range p.fns {
				if f.name == name || stepName(f.name) == name {
					return f
				}
			}
			t.Fatalf("no step %s", name)
			return nil
		}
		ev, top, rule := step("opa_eval"), step("eval"), step("data.yunikorn.queues.decision")
		if !ev.step || !rule.step {
			t.Errorf("opa_eval and the decision rule are not steps")
		}
		if got := float64(ev.inclusive) / 20; got != p.totalCalls() {
			t.Errorf("opa_eval inclusive calls %v, want every call of the decision, %v", got, p.totalCalls())
		}
		if got := float64(ev.allocs) / 20; got != p.calls("opa_malloc") {
			t.Errorf("opa_eval inclusive opa_malloc %v, want %v", got, p.calls("opa_malloc"))
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
