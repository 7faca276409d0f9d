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
