package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// callProfile is what the guest does for one decision on the wasm engine:
// how often each of the policy module's own functions is called. Host
// functions (builtins) are not counted: wazero notifies listeners of the
// module's own functions.
//
// There is no time per function: a listener on every call makes a decision
// tens of times slower, so what a clock around each call measures is mostly
// the listener itself.
type callProfile struct {
	scenario, entrypoint string
	decisions            int
	// minCalls and maxCalls are the fewest and most guest calls of one
	// decision: equal when the decision is deterministic.
	minCalls, maxCalls int64
	fns                []*fnStats // calls summed over the decisions
	instrumented       time.Duration
	plain              time.Duration // median of the same decision without listeners
}

type fnStats struct {
	name  string
	calls int64
}

// callCounter is the listener of every guest function. Its counts are not
// synchronised: the policy runs one evaluation at a time (a pool of one
// instance, decisions in turn).
type callCounter struct {
	fns   []*fnStats
	calls int64
}

func (c *callCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	name := def.Name()
	if name == "" {
		if ex := def.ExportNames(); len(ex) > 0 {
			name = ex[0]
		} else {
			name = fmt.Sprintf("$%d", def.Index())
		}
	}
	s := &fnStats{name: name}
	c.fns = append(c.fns, s)
	return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
		s.calls++
		c.calls++
	})
}

// scenarioSources reads a scenario's configuration, or that of the
// scenario whose bundle it shares.
func scenarioSources(sc *scenario) (*translate.Sources, error) {
	if sc.reuse != nil {
		sc = sc.reuse
	}
	s := &translate.Sources{}
	name := sc.file
	if name == "" {
		name = sc.name + ".yaml"
	}
	if err := s.Add(name, sc.src, translate.KindAuto); err != nil {
		return nil, err
	}
	return s, nil
}

// profileScenario builds the scenario's Wasm bundle, loads it once with a
// listener on every guest function and once without, and counts the calls
// of n decisions, each checked against the native decision.
func profileScenario(ctx context.Context, sc *scenario, n int) (*callProfile, error) {
	s, err := scenarioSources(sc)
	if err != nil {
		return nil, err
	}
	wb, err := translate.WasmBundle(ctx, s)
	if err != nil {
		return nil, err
	}
	raw, err := translate.BundleBytes(wb)
	if err != nil {
		return nil, err
	}
	native := engine.NewNative(s, engine.NewGroupCache(s.Groups()))
	want, err := native.Eval(ctx, sc.entrypoint(), sc.input)
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	counter := &callCounter{}
	w, err := engine.NewWasm(ctx, raw, wasm.NewConfig().WithPoolSize(1).WithFunctionListener(counter), engine.NewGroupCache(s.Groups()))
	if err != nil {
		return nil, err
	}
	defer w.Close(ctx)
	plain, err := engine.NewWasm(ctx, raw, wasm.NewConfig().WithPoolSize(1), engine.NewGroupCache(s.Groups()))
	if err != nil {
		return nil, err
	}
	defer plain.Close(ctx)

	// Loading calls into the guest too (the data, the entry points):
	// counting starts after a first decision.
	if _, err := w.Eval(ctx, sc.entrypoint(), sc.input); err != nil {
		return nil, err
	}
	for _, f := range counter.fns {
		f.calls = 0
	}
	p := &callProfile{scenario: sc.name, entrypoint: sc.entrypoint(), decisions: n, fns: counter.fns, minCalls: -1}
	start := time.Now()
	for i := 0; i < n; i++ {
		before := counter.calls
		got, err := w.Eval(ctx, sc.entrypoint(), sc.input)
		if err != nil {
			return nil, err
		}
		if !sameJSON(got, want) {
			return nil, fmt.Errorf("%s: the wasm decision differs from native: %.200s", sc.name, got)
		}
		c := counter.calls - before
		if p.minCalls < 0 || c < p.minCalls {
			p.minCalls = c
		}
		p.maxCalls = max(p.maxCalls, c)
	}
	p.instrumented = time.Since(start) / time.Duration(n)
	p.plain = measure(ctx, epEngine{plain, sc.entrypoint()}, sc.input, want, max(n, 100), 0).median
	return p, nil
}

// calls returns the calls of the named function per decision.
func (p *callProfile) calls(name string) float64 {
	var c int64
	for _, f := range p.fns {
		if f.name == name {
			c += f.calls
		}
	}
	return float64(c) / float64(p.decisions)
}

// totalCalls is the guest calls per decision.
func (p *callProfile) totalCalls() float64 {
	var c int64
	for _, f := range p.fns {
		c += f.calls
	}
	return float64(c) / float64(p.decisions)
}

// top returns the n functions called at least once that rank first by less.
func (p *callProfile) top(n int, less func(a, b *fnStats) bool) []*fnStats {
	var fs []*fnStats
	for _, f := range p.fns {
		if f.calls > 0 {
			fs = append(fs, f)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return less(fs[i], fs[j]) })
	return fs[:min(n, len(fs))]
}

func (p *callProfile) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s (%s), wasm engine, %d decisions\n", p.scenario, p.entrypoint, p.decisions)
	stable := "the same for every decision"
	if p.minCalls != p.maxCalls {
		stable = fmt.Sprintf("from %d to %d", p.minCalls, p.maxCalls)
	}
	fmt.Fprintf(&b, "guest calls per decision: %.0f (%s)\nopa_malloc calls per decision: %.0f\n", p.totalCalls(), stable, p.calls("opa_malloc"))
	fmt.Fprintf(&b, "time per decision: %s (median, no listener); %s with a listener on every guest call, too distorted to time functions\n", us(p.plain), us(p.instrumented))
	fmt.Fprintf(&b, "  %-44s %10s %6s\n", "function", "calls", "share")
	total := p.totalCalls()
	for _, f := range p.top(20, func(a, b *fnStats) bool { return a.calls > b.calls }) {
		c := float64(f.calls) / float64(p.decisions)
		fmt.Fprintf(&b, "  %-44s %10.1f %5.1f%%\n", f.name, c, 100*c/total)
	}
	b.WriteString("\n")
	return b.String()
}
