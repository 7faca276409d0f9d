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
	// For a step (see isStep): the guest calls and opa_malloc calls made
	// while it runs, its own call included, counted once however deeply
	// it recurses.
	step              bool
	active            int
	inclusive, allocs int64
}

// isStep tells the functions the breakdown is made of: the rules and
// functions the policy compiles to (OPA names them g<N>.data.<package>.<rule>),
// and the phases of opa_eval around them.
func isStep(name string) bool {
	if strings.HasPrefix(name, "g") {
		if i := strings.Index(name, ".data."); i > 1 && strings.Trim(name[1:i], "0123456789") == "" {
			return true
		}
	}
	switch name {
	case "opa_eval", "eval", "opa_json_parse", "opa_value_parse", "opa_json_dump", "opa_value_dump":
		return true
	}
	return false
}

// callCounter is the listener of every guest function. Its counts are not
// synchronised: the policy runs one evaluation at a time (a pool of one
// instance, decisions in turn).
type callCounter struct {
	fns   []*fnStats
	calls int64
	// active holds the steps running now, outermost first, each once.
	active []*fnStats
	// stack is every call running now, to know what After ends.
	stack []*fnStats
}

// fnListener counts the calls of one function.
type fnListener struct {
	c      *callCounter
	s      *fnStats
	malloc bool
}

func (l fnListener) Before(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
	c, s := l.c, l.s
	s.calls++
	c.calls++
	c.stack = append(c.stack, s)
	if s.step {
		if s.active == 0 {
			c.active = append(c.active, s)
		}
		s.active++
	}
	for _, a := range c.active {
		a.inclusive++
		if l.malloc {
			a.allocs++
		}
	}
}

func (l fnListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {
	l.c.pop()
}

func (l fnListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {
	l.c.pop()
}

func (c *callCounter) pop() {
	if len(c.stack) == 0 {
		return
	}
	s := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	if s.step {
		s.active--
		if s.active == 0 {
			for i, a := range c.active {
				if a == s {
					c.active = append(c.active[:i], c.active[i+1:]...)
					break
				}
			}
		}
	}
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
	s := &fnStats{name: name, step: isStep(name)}
	c.fns = append(c.fns, s)
	return fnListener{c: c, s: s, malloc: name == "opa_malloc"}
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
	native, err := engine.Open(ctx, engine.Native, engine.Target{Sources: s})
	if err != nil {
		return nil, err
	}
	want, err := native.Eval(ctx, sc.entrypoint(), sc.input)
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	load := func(c wasm.Config) (engine.Engine, error) {
		return engine.Open(ctx, engine.Wasm, engine.Target{Sources: s, Bundle: wb, Wasm: &c})
	}
	return profileEngine(ctx, sc.name, sc.entrypoint(), load, sc.input, want, n)
}

// profileFloor counts the calls of the floor's constant rule with the input.
func profileFloor(ctx context.Context, input []byte, n int) (*callProfile, error) {
	raw := floorBundle(ctx)
	load := func(c wasm.Config) (engine.Engine, error) {
		p, err := wasm.Load(ctx, raw, c)
		return floorEngine{p}, err
	}
	return profileEngine(ctx, "floor", "floor/x", load, input, []byte("1"), n)
}

// profileEngine loads a policy twice, with a listener on every guest
// function and without, and counts the calls of n decisions, each checked
// against want.
func profileEngine(ctx context.Context, name, ep string, load func(wasm.Config) (engine.Engine, error), input, want []byte, n int) (*callProfile, error) {
	counter := &callCounter{}
	w, err := load(wasm.NewConfig().WithPoolSize(1).WithFunctionListener(counter))
	if err != nil {
		return nil, err
	}
	defer w.Close(ctx)
	plain, err := load(wasm.NewConfig().WithPoolSize(1))
	if err != nil {
		return nil, err
	}
	defer plain.Close(ctx)

	// Loading calls into the guest too (the data, the entry points):
	// counting starts after a first decision.
	if _, err := w.Eval(ctx, ep, input); err != nil {
		return nil, err
	}
	for _, f := range counter.fns {
		f.calls, f.inclusive, f.allocs = 0, 0, 0
	}
	p := &callProfile{scenario: name, entrypoint: ep, decisions: n, fns: counter.fns, minCalls: -1}
	start := time.Now()
	for i := 0; i < n; i++ {
		before := counter.calls
		got, err := w.Eval(ctx, ep, input)
		if err != nil {
			return nil, err
		}
		if !sameJSON(got, want) {
			return nil, fmt.Errorf("%s: the wasm decision differs from native: %.200s", name, got)
		}
		c := counter.calls - before
		if p.minCalls < 0 || c < p.minCalls {
			p.minCalls = c
		}
		p.maxCalls = max(p.maxCalls, c)
	}
	p.instrumented = time.Since(start) / time.Duration(n)
	p.plain = measure(ctx, epEngine{plain, ep}, input, want, max(n, 100), 0).median
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

// inclusive returns the guest calls made while the named step runs, per
// decision (0 when it never ran).
func (p *callProfile) inclusive(name string) float64 {
	for _, f := range p.fns {
		if f.name == name && f.step {
			return float64(f.inclusive) / float64(p.decisions)
		}
	}
	return 0
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
	b.WriteString(p.renderSteps(total))
	b.WriteString("\n")
	return b.String()
}

// renderSteps is the per-step breakdown: for each phase of opa_eval and each
// rule or function of the policy, the guest calls and opa_malloc calls made
// while it runs (what it calls included), per decision. Steps nest, so the
// shares add up to more than 100 %.
func (p *callProfile) renderSteps(total float64) string {
	steps := p.steps(30)
	var b strings.Builder
	fmt.Fprintf(&b, "  steps: guest calls and opa_malloc while each runs (nested steps included)\n")
	fmt.Fprintf(&b, "  %-52s %6s %9s %6s %7s\n", "step", "calls", "inclusive", "share", "mallocs")
	n := float64(p.decisions)
	for _, f := range steps {
		in := float64(f.inclusive) / n
		fmt.Fprintf(&b, "  %-52s %6.1f %9.1f %5.1f%% %7.1f\n", stepName(f.name), float64(f.calls)/n, in, 100*in/total, float64(f.allocs)/n)
	}
	return b.String()
}

// steps returns the n steps with the most inclusive calls.
func (p *callProfile) steps(n int) []*fnStats {
	var fs []*fnStats
	for _, f := range p.fns {
		if f.step && f.inclusive > 0 {
			fs = append(fs, f)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].inclusive != fs[j].inclusive {
			return fs[i].inclusive > fs[j].inclusive
		}
		return fs[i].name < fs[j].name
	})
	return fs[:min(n, len(fs))]
}

// innerSteps are the n steps with the most inclusive calls other than
// opa_eval, eval and the entry point's rule, which hold them all.
func (p *callProfile) innerSteps(n int) []*fnStats {
	entry := "data." + strings.ReplaceAll(p.entrypoint, "/", ".")
	var fs []*fnStats
	for _, f := range p.steps(n + 3) {
		if f.name != "opa_eval" && f.name != "eval" && stepName(f.name) != entry && len(fs) < n {
			fs = append(fs, f)
		}
	}
	return fs
}

// stepName drops the g<N>. prefix OPA gives a compiled rule.
func stepName(name string) string {
	if i := strings.Index(name, ".data."); i > 0 && strings.HasPrefix(name, "g") {
		return name[i+1:]
	}
	return name
}

// pairScenario times a scenario's decision on the wasm engine and the
// floor with the same input in alternating batches (as the report's
// multiples of the floor), and counts the guest calls of both: a quick
// side-by-side reading of one decision, without the other engines.
func pairScenario(ctx context.Context, sc *scenario, samples int) string {
	s, err := scenarioSources(sc)
	check(err)
	wb, err := translate.WasmBundle(ctx, s)
	check(err)
	native, err := engine.Open(ctx, engine.Native, engine.Target{Sources: s})
	check(err)
	want, err := native.Eval(ctx, sc.entrypoint(), sc.input)
	check(err)
	w, err := engine.Open(ctx, engine.Wasm, engine.Target{Sources: s, Bundle: wb})
	check(err)
	defer w.Close(ctx)
	d, f := pairRun(ctx, epEngine{w, sc.entrypoint()}, sc.input, want, samples)
	p, err := profileScenario(ctx, sc, 20)
	check(err)
	fp, err := profileFloor(ctx, sc.input, 20)
	check(err)
	return fmt.Sprintf("%s: wasm %s, floor %s, wasm/floor %.2f×; guest calls %.0f (%.0f opa_malloc), floor %.0f (%.0f); wrong answers %d\n  %s\n",
		sc.name, us(d.median), us(f.median), ratio(d.median, f.median), p.totalCalls(), p.calls("opa_malloc"), fp.totalCalls(), fp.calls("opa_malloc"), d.wrongDecisionsCount, strings.TrimPrefix(callKinds(p, fp), "; "))
}
