package main

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
)

// report is the figures of one run. docs/BENCHMARKS.md and
// docs/BENCHMARKS.json are both rendered from it, and every ratio and
// verdict from the methods below, so the two cannot disagree.
type report struct {
	generated time.Time
	// kube is the Kubernetes policies figures, when given.
	kube      *kubeReport
	samples   int
	scenarios []*scenario
	results   map[string][]result
	// floor is the floor with the seed input; floors, by scenario, the
	// floor with the scenario's input timed in alternating batches with
	// its wasm engine, whose times in those batches are wasmBeside: a
	// multiple of the floor divides these two, so that both figures of
	// the ratio come from the same moments of a shared machine.
	floor      result
	floors     map[string]result
	wasmBeside map[string]result
	// The sections a run with -scenarios skips are nil.
	heap   *heapResult
	res    *resolution
	load   *loadResult
	served *serveResult
	// profiles are the guest calls of the floor (first) and of the
	// profiled decisions; probe is the per-character probe.
	profiles []*callProfile
	probe    *probeResult
}

// engines lists the engines in the order of the tables.
var engines = []string{engine.Native, engine.Rego, engine.OPAWasm, engine.Wasm}

// median returns an engine's median on a scenario, 0 when not measured.
func (r report) median(scenario, eng string) time.Duration {
	return find(r.results[scenario], eng).median
}

// floorOf is the floor a scenario's multiples divide by: the one
// measured beside its wasm engine, else the seed's.
func (r report) floorOf(scenario string) result {
	if f, ok := r.floors[scenario]; ok {
		return f
	}
	return r.floor
}

// overFloor returns the two medians a scenario's multiple of the floor
// divides: the wasm engine and the floor timed in alternating batches,
// else the wasm engine's median and the seed's floor.
func (r report) overFloor(scenario string) (decision, floor time.Duration) {
	d, dok := r.wasmBeside[scenario]
	f, fok := r.floors[scenario]
	if dok && fok {
		return d.median, f.median
	}
	return r.median(scenario, engine.Wasm), r.floorOf(scenario).median
}

// ratio is a / b, 0 when either was not measured.
func ratio(a, b time.Duration) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// scenarioRatios are the ratios of medians stated under each scenario's
// table, keyed as in the JSON.
func (r report) scenarioRatios(name string) map[string]float64 {
	w := r.median(name, engine.Wasm)
	return map[string]float64{
		"opa-wasm/wasm": ratio(r.median(name, engine.OPAWasm), w),
		"rego/wasm":     ratio(r.median(name, engine.Rego), w),
		"wasm/native":   ratio(w, r.median(name, engine.Native)),
		"wasm/floor":    ratio(r.overFloor(name)),
	}
}

// target is one row of the targets table.
type target struct {
	what     string // the target as stated
	measured string // the figure as rendered
	value    float64
	met      bool
	// limit says, for a target not met, what limits the figure, from
	// the profiles and the probe of the same run.
	limit string
}

// ratioTarget is a target on the ratio of two medians; it is left out
// when either was not measured in the run.
func ratioTarget(ts []target, what string, a, b time.Duration, ok func(float64) bool) []target {
	v := ratio(a, b)
	if v == 0 {
		return ts
	}
	return append(ts, target{what: what, measured: fmt.Sprintf("%.2f× (%s / %s)", v, us(a), us(b)), value: v, met: ok(v)})
}

// targets are the product's targets, with the figures of the run.
func (r report) targets() []target {
	var ts []target
	w := func(s string) time.Duration { return r.median(s, engine.Wasm) }
	atMost := func(x float64) func(float64) bool { return func(v float64) bool { return v <= x } }
	atLeast := func(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
	ts = ratioTarget(ts, "a 48-character user costs ≤ 1.2× a 4-character one (seed-long-user / seed, `wasm`, median)", w("seed-long-user"), w("seed"), atMost(1.2))
	ts = ratioTarget(ts, "large / seed ≤ 1.15× (`wasm`, median)", w("large"), w("seed"), atMost(1.15))
	// OPA's evaluator remembers a function's result by its arguments: a
	// policy that passes the configuration's queues to a function compares
	// them at every call, and a decision grows with the configuration.
	ts = ratioTarget(ts, "large / seed ≤ 1.15× (`rego`, median)", r.median("large", engine.Rego), r.median("seed", engine.Rego), atMost(1.15))
	d, f := r.overFloor("seed")
	ts = ratioTarget(ts, "seed on `wasm` ≤ 2.5× the floor (median)", d, f, atMost(2.5))
	ts = ratioTarget(ts, "`opa-wasm` / `wasm` ≥ 12× (seed, median)", r.median("seed", engine.OPAWasm), w("seed"), atLeast(12))
	ts = ratioTarget(ts, "`rego` / `wasm` ≥ 15× (seed, median)", r.median("seed", engine.Rego), w("seed"), atLeast(15))
	ts = ratioTarget(ts, "admission on `wasm` ≤ 1.5× `native` (median)", w("admission"), r.median("admission", engine.Native), atMost(1.5))
	d, f = r.overFloor("vov")
	ts = ratioTarget(ts, "VOV on `wasm` ≤ 3× the floor (vov, median)", d, f, atMost(3))
	if ws := w("seed"); ws > 0 {
		ts = append(ts, target{what: "`wasm` median ≤ 3 µs per decision with explicit groups (seed)", measured: us(ws), value: float64(ws.Nanoseconds()), met: ws <= 3*time.Microsecond})
	}
	ts = ratioTarget(ts, "placement: keyed data, a placement costs the same with many more queues at the same depth (placement-large / placement-depth, `wasm`, median; DESIGN) ≤ 1.3×", w("placement-large"), w("placement-depth"), atMost(1.3))
	ts = ratioTarget(ts, "VOV: keyed data, a decision costs the same with many more objects (vov-large / vov, `wasm`, median; DESIGN) ≤ 1.3×", w("vov-large"), w("vov"), atMost(1.3))
	if h := r.heap; h != nil {
		growth := int64(h.goHeapAfter) - int64(h.goHeapBefore)
		pagesSame := fmt.Sprint(h.pagesBefore) == fmt.Sprint(h.pagesAfter)
		ts = append(ts, target{what: fmt.Sprintf("no heap growth over %d evaluations (`wasm`)", h.evals),
			measured: fmt.Sprintf("Go heap in use %+d bytes (%d → %d); instance pages %v → %v; %d wrong answers; %s", growth, h.goHeapBefore, h.goHeapAfter, h.pagesBefore, h.pagesAfter, h.wrong, h.elapsed.Round(time.Millisecond)),
			value:    float64(growth), met: pagesSame && growth < 1<<20 && h.wrong == 0})
	}
	for _, sc := range r.scenarios {
		if sc.name == "large" && sc.reuse == nil {
			ts = append(ts, target{what: fmt.Sprintf("building the %d-queue config to Wasm < 30 s", sc.queues), measured: sc.buildTime.Round(time.Millisecond).String(),
				value: sc.buildTime.Seconds(), met: sc.buildTime < 30*time.Second})
		}
	}
	if res := r.res; res != nil {
		lookupNs := float64(res.cachedLookup.T.Nanoseconds()) / float64(res.cachedLookup.N)
		ts = append(ts, target{what: "a cached group lookup ≤ 200 ns", measured: fmt.Sprintf("%.0f ns, %d allocs/op", lookupNs, res.cachedLookup.AllocsPerOp()), value: lookupNs, met: lookupNs <= 200})
		ts = ratioTarget(ts, "`wasm` decision resolving groups through the host builtin ≤ 2× one with explicit groups", res.resolved.median, res.explicit.median, atMost(2))
	}
	if l := r.load; l != nil {
		ts = append(ts, target{what: fmt.Sprintf("`aclc webhook` ≥ 3,000 AdmissionReviews/s over TLS, p99 ≤ 5 ms, zero errors (loopback, %d keep-alive clients, %s, client and server on the same %d CPUs)", l.workers, l.duration.Round(time.Millisecond), runtime.NumCPU()),
			measured: fmt.Sprintf("%.0f/s, p50 %s, p99 %s, max %s, %d errors of %d", l.rps, us(l.p50), us(l.p99), us(l.pMax), l.errors, l.requests),
			value:    l.rps, met: l.met()})
	}
	for i := range ts {
		if !ts[i].met {
			ts[i].limit = r.limit(ts[i].what)
		}
	}
	return ts
}

// queuesOf is the number of queues of a scenario's configuration.
func (r report) queuesOf(name string) int {
	for _, sc := range r.scenarios {
		if sc.name == name {
			return sc.queues
		}
	}
	return 0
}

// profile returns the profile of the named decision ("floor" for the
// floor), nil when it was not profiled.
func (r report) profile(name string) *callProfile {
	for _, p := range r.profiles {
		if p.scenario == name {
			return p
		}
	}
	return nil
}

// beyondFloor says how many guest calls and opa_malloc calls a decision
// makes beyond the floor's, and which of its steps make most of them.
func (r report) beyondFloor(name string) string {
	p, f := r.profile(name), r.profile("floor")
	if p == nil || f == nil {
		return ""
	}
	return fmt.Sprintf("the floor makes %.0f guest calls (%.0f `opa_malloc`), the %s decision %.0f (%.0f): its own Rego is the other %.0f calls, most of them in %s (profile below)",
		f.totalCalls(), f.calls("opa_malloc"), name, p.totalCalls(), p.calls("opa_malloc"), p.totalCalls()-f.totalCalls(), topSteps(p, 4)) + callKinds(p, f)
}

// The kinds of guest call callKinds tells apart.
const (
	kindLookup = iota // finding a key, comparing values
	kindAlloc         // allocating and copying memory
	kindPolicy        // the policy's own compiled rules and functions
	kindBuild         // the rest of OPA's runtime: building values, builtins
	kinds
)

// callKind sorts a guest function into one of the kinds.
func callKind(name string) int {
	switch {
	case name == "opa_value_get", name == "opa_value_hash", name == "opa_value_type", name == "opa_strncmp",
		strings.HasPrefix(name, "opa_value_compare"):
		return kindLookup
	case name == "opa_malloc", name == "memcpy", name == "memset", strings.HasSuffix(name, "_grow"):
		return kindAlloc
	case isStep(name) && strings.HasPrefix(name, "g"):
		return kindPolicy
	}
	return kindBuild
}

// callKinds says of which kinds the calls a decision makes beyond the
// floor's are: what the policy can still save is fewer lookups in its data
// and fewer values built, each of which costs several calls of OPA's
// runtime, not fewer rules.
func callKinds(p, f *callProfile) string {
	var by [kinds]float64
	for _, fn := range p.fns {
		by[callKind(fn.name)] += float64(fn.calls) / float64(p.decisions)
	}
	for _, fn := range f.fns {
		by[callKind(fn.name)] -= float64(fn.calls) / float64(f.decisions)
	}
	return fmt.Sprintf("; of the calls beyond the floor's, %.0f find keys and compare values (`opa_value_get`, `opa_value_hash`, `opa_value_compare`, `opa_strncmp`, `opa_value_type`), %.0f allocate and copy (`opa_malloc`, `memcpy`, growing objects, sets and arrays), %.0f build the other values and run builtins, and %.0f enter the policy's own rules and functions",
		by[kindLookup], by[kindAlloc], by[kindBuild], by[kindPolicy])
}

// topSteps lists the n steps of a decision with the most inclusive guest
// calls, leaving out those that hold all of them.
func topSteps(p *callProfile, n int) string {
	var top []string
	for _, s := range p.innerSteps(n) {
		top = append(top, fmt.Sprintf("`%s` %.0f", stepName(s.name), float64(s.inclusive)/float64(p.decisions)))
	}
	return strings.Join(top, ", ")
}

// floorBudget says, for a target of at most factor times the floor, what
// the decision's time above the floor costs a guest call in this run and
// how much of it the target leaves: the floor is the host's fixed work for
// any evaluation (its checks, writing the input, one eval, printing the
// result), so a target on the multiple can only be met by the decision's
// own work, and it gets harder as the floor gets cheaper.
func (r report) floorBudget(name string, factor float64) string {
	p, f := r.profile(name), r.profile("floor")
	d, m := r.overFloor(name)
	extra := 0.0
	if p != nil && f != nil {
		extra = p.totalCalls() - f.totalCalls()
	}
	if d <= 0 || m <= 0 || extra <= 0 || d <= m {
		return ""
	}
	perCall := float64(d-m) / extra
	allowed := time.Duration(factor * float64(m))
	over := d - allowed
	if over <= 0 {
		return ""
	}
	return fmt.Sprintf("; above the floor's %s the decision spends %s, %.1f ns for each of its %.0f guest calls beyond the floor's: %.1f× the floor allows %s, so %s less, about %.0f fewer guest calls at that rate (or %.0f%% of them)",
		us(m), us(d-m), perCall, extra, factor, us(allowed), us(over), float64(over)/perCall, 100*float64(over)/perCall/extra)
}

// limit explains, from the profiles and the probe, what limits the
// figure of a target not met; "" when the run has nothing to show.
func (r report) limit(what string) string {
	switch {
	case strings.HasPrefix(what, "a 48-character user"):
		pr := r.probe
		ws, wl := r.median("seed", engine.Wasm), r.median("seed-long-user", engine.Wasm)
		if pr == nil || ws == 0 {
			return ""
		}
		per := pr.perChar(userNameProbes[0].name)
		extra := time.Duration(pr.longChars-pr.shortChars) * per
		var others []string
		for _, x := range pr.probes[1:] {
			others = append(others, fmt.Sprintf("`%s` %s a character (%s for the short name)", x.name, us(pr.perChar(x.name)), us(x.short.median)))
		}
		text := fmt.Sprintf("the policy matches YuniKorn's rule (`^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`) with `regex.match`, which the host serves with expressions compiled once (a sequence of ASCII classes such as this rule by one pass over the bytes); that match alone (the probe) costs %s a character in this run (%s for the short name), so the %d more characters cost %s: %.2f× the seed median for that alone (measured: %s more). Checking every character in Rego, in the same run: %s",
			us(per), us(pr.probes[0].short.median), pr.longChars-pr.shortChars, us(extra), float64(ws+extra)/float64(ws), us(wl-ws), strings.Join(others, ", "))
		if p, q := r.profile("seed-long-user"), r.profile("seed"); p != nil && q != nil {
			text += fmt.Sprintf("; guest calls %.0f against %.0f, `opa_malloc` %.0f against %.0f", p.totalCalls(), q.totalCalls(), p.calls("opa_malloc"), q.calls("opa_malloc"))
		}
		return text
	case strings.HasPrefix(what, "large / seed"):
		p, q := r.profile("large"), r.profile("seed")
		if p == nil || q == nil || p.totalCalls() > q.totalCalls() {
			return ""
		}
		return fmt.Sprintf("the large decision makes %.0f guest calls (%.0f `opa_malloc`) against the seed's %.0f (%.0f): no more calls. What differs is the data its lookups go through: the partition's queues are one object of %d keys against the seed's handful, so the time above the seed's is that of looking keys up in a larger object, not of more work",
			p.totalCalls(), p.calls("opa_malloc"), q.totalCalls(), q.calls("opa_malloc"), r.queuesOf("large"))
	case strings.HasPrefix(what, "seed on `wasm`"):
		if b := r.beyondFloor("seed"); b != "" {
			return b + r.floorBudget("seed", 2.5)
		}
		return ""
	case strings.HasPrefix(what, "`wasm` median ≤ 3 µs"):
		if b := r.beyondFloor("seed"); b != "" {
			return fmt.Sprintf("the floor alone, the host's work for any evaluation, is %s of it; ", us(r.floorOf("seed").median)) + b
		}
		return ""
	case strings.HasPrefix(what, "admission on `wasm`"):
		p := r.profile("admission")
		if p == nil {
			return ""
		}
		text := fmt.Sprintf("both engines check the review's canonical form in Go first; the `wasm` review then makes %.0f guest calls (%.0f `opa_malloc`), most of them in %s (profile below)",
			p.totalCalls(), p.calls("opa_malloc"), topSteps(p, 4))
		if parse := p.inclusive("opa_value_parse"); parse > 0 {
			text += fmt.Sprintf(", and %.0f parsing the review into guest values (`opa_value_parse`: the host did not write it in the module's layout)", parse)
		}
		return text
	case strings.HasPrefix(what, "VOV on `wasm`"):
		if b := r.beyondFloor("vov"); b != "" {
			return b + r.floorBudget("vov", 3)
		}
		return ""
	case strings.HasPrefix(what, "`opa-wasm` / `wasm`"), strings.HasPrefix(what, "`rego` / `wasm`"):
		return "a ratio of two engines on one machine shared with other work; the `wasm` side is limited as the floor target says: " + r.beyondFloor("seed")
	}
	return ""
}

// markdown renders docs/BENCHMARKS.md.
func (r report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\nGenerated by `make bench` (`go run ./tests/bench`) on %s, %s/%s, %d CPUs, %s. Do not edit by hand; the same figures are in [BENCHMARKS.json](BENCHMARKS.json).\n\n",
		r.generated.Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	b.WriteString("Every engine decides the same input on the same bundle in one run; each answer is checked against the native decision. Absolute times depend on the machine: read the ratios. The floor is the `wasm` host evaluating a constant rule (see the last section).\n\n")
	for _, sc := range r.scenarios {
		rs := r.results[sc.name]
		if len(rs) == 0 {
			continue
		}
		if sc.reuse != nil {
			fmt.Fprintf(&b, "## %s: %s\n\nThe bundle and engines of %s.\n\n", sc.name, sc.what, sc.reuse.name)
		} else {
			fmt.Fprintf(&b, "## %s: %s\n\nWasm bundle built from source in %s, %d bytes.\n\n", sc.name, sc.what, sc.buildTime.Round(time.Millisecond), sc.bundleSize)
		}
		fmt.Fprintf(&b, "| engine | median | p90 | p99 | mean | allocs/op | parallel (%d goroutines) | wrong answers |\n|---|---|---|---|---|---|---|---|\n", rs[0].parallelGoroutines)
		for _, x := range rs {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f | %.0f decisions/s | %d |\n", x.engine, us(x.median), us(x.p90), us(x.p99), us(x.mean), x.allocs, x.parallelOpsPerSec, x.wrongDecisionsCount+x.parallelErrors)
		}
		q := r.scenarioRatios(sc.name)
		fmt.Fprintf(&b, "\nRatios (median): opa-wasm / wasm = %.1f×, rego / wasm = %.1f×, wasm / native = %.2f×, wasm / floor = %.2f×.\n", q["opa-wasm/wasm"], q["rego/wasm"], q["wasm/native"], q["wasm/floor"])
		if d, ok := r.wasmBeside[sc.name]; ok {
			fmt.Fprintf(&b, "The floor with this input, timed in alternating batches with the `wasm` engine: median %s, the `wasm` engine in the same batches %s; wasm / floor divides these two.\n", us(r.floors[sc.name].median), us(d.median))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Targets\n\n| target | measured | |\n|---|---|---|\n")
	var limits []target
	for _, t := range r.targets() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, t.measured, verdict(t.met))
		if t.limit != "" {
			limits = append(limits, t)
		}
	}
	if len(limits) > 0 {
		b.WriteString("\nWhat limits the targets not met, from the profiles and the probe of this run:\n\n")
		for _, t := range limits {
			fmt.Fprintf(&b, "- %s: %s.\n", t.what, t.limit)
		}
	}
	if r.load != nil {
		b.WriteString(renderMixedLoad(*r.load))
	}
	if res := r.res; res != nil {
		b.WriteString("\n## LDAP group lookups\n\n")
		if res.ldapCached == nil {
			fmt.Fprintf(&b, "Not measured: %s.\n", res.ldapSkipped)
		} else {
			perOp := func(r *testing.BenchmarkResult) float64 { return float64(r.T.Nanoseconds()) / float64(r.N) }
			fmt.Fprintf(&b, "YuniKorn's LDAP resolver against a slapd on loopback (`BenchmarkLDAP...` in `builtins/`): a lookup the cache answers %.0f ns, %d allocs/op; a miss — dial, bind, search, close — %s, %d allocs/op. A miss is paid once per user per 300 s.\n",
				perOp(res.ldapCached), res.ldapCached.AllocsPerOp(), us(time.Duration(perOp(res.ldapUncached))), res.ldapUncached.AllocsPerOp())
		}
	}
	if len(r.results["placement"]) > 0 && len(r.results["seed"]) > 0 {
		b.WriteString("\n## Placement against the queue decision\n\nThe same configuration, bundle and engine; placement runs the rules, the queue lookups and the ACL check of the queue decision, then builds its longer answer. Ratio of medians, placement / queue decision:\n\n| engine | seed | large |\n|---|---|---|\n")
		for _, name := range engines {
			qs, ql := r.median("seed", name), r.median("large", name)
			ps, pl := r.median("placement", name), r.median("placement-large", name)
			fmt.Fprintf(&b, "| %s | %.1f× (%s / %s) | %.1f× (%s / %s) |\n", name, ratio(ps, qs), us(ps), us(qs), ratio(pl, ql), us(pl), us(ql))
		}
	}
	fmt.Fprintf(&b, "\n## What limits the `wasm` engine\n\nThe same host evaluating a module whose entry point is the constant `x := 1`, with the seed input (the floor): median %s, p99 %s, %.1f allocs/op. That is the host's work for any evaluation: checking the input, writing it into guest memory in the module's value layout, resetting the heap, one call of the module's `eval`, and printing the result from guest memory",
		us(r.floor.median), us(r.floor.p99), r.floor.allocs)
	if ws := r.median("seed", engine.Wasm); ws > 0 {
		fmt.Fprintf(&b, "; the queue decision's own Rego (input type checks, ConvertUGI, the lookup and the reason string) accounts for the remaining %s of the seed median", us(ws-r.floor.median))
	}
	b.WriteString(". `make profile` counts the guest function calls of each decision. The queue and placement decisions match YuniKorn's name rules with `regex.match`: aclc's host compiles each expression once per policy, while OPA's own Wasm runtime (`opa-wasm`) compiles it again at every evaluation, which is part of its time on those decisions.\n")
	b.WriteString(r.renderProfiles())
	fmt.Fprintf(&b, "\nSingle decisions are timed one by one (%d per engine, after a warm-up, fewer where a scenario says so), so the median includes ~50 ns of timer overhead. The Go heap check allows 1 MiB of noise from the runtime itself.\n", r.samples)
	if r.served != nil {
		b.WriteString("\n" + renderServe(*r.served))
	}
	if r.kube != nil {
		b.WriteString("\n" + r.kube.markdown())
	}
	return b.String()
}

// The JSON document: floor_ns and scenarios.<scenario>.<engine>.median_ns
// and p99_ns are the stable part; the rest describes the run.
type reportJSON struct {
	Generated string `json:"generated"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	CPUs      int    `json:"cpus"`
	Samples   int    `json:"samples"`
	FloorNs   int64  `json:"floor_ns"`
	FloorP99  int64  `json:"floor_p99_ns"`
	// FloorsNs is the floor with each scenario's input, and WasmBesideNs
	// its wasm engine, timed in alternating batches: its wasm/floor ratio
	// divides these two.
	FloorsNs     map[string]int64                 `json:"floor_ns_by_scenario,omitempty"`
	WasmBesideNs map[string]int64                 `json:"wasm_beside_floor_ns_by_scenario,omitempty"`
	Scenarios    map[string]map[string]engineJSON `json:"scenarios"`
	Ratios       map[string]map[string]jsonFloat  `json:"ratios"`
	Targets      []targetJSON                     `json:"targets"`
	// SamplesByScenario names the scenarios timed with fewer samples.
	SamplesByScenario map[string]int `json:"samples_by_scenario,omitempty"`
	// Profiles are the guest calls per decision ("floor" included).
	Profiles  map[string]profileJSON `json:"profiles,omitempty"`
	CharProbe *probeJSON             `json:"char_probe,omitempty"`
	// KubernetesPolicies is tests/cel/cmd/kubebench's document, as it
	// wrote it.
	KubernetesPolicies json.RawMessage `json:"kubernetes_policies,omitempty"`
}

type profileJSON struct {
	GuestCalls jsonFloat  `json:"guest_calls"`
	Mallocs    jsonFloat  `json:"opa_malloc"`
	Steps      []stepJSON `json:"steps"`
}

type stepJSON struct {
	Step      string    `json:"step"`
	Calls     jsonFloat `json:"calls"`
	Inclusive jsonFloat `json:"inclusive_guest_calls"`
	Mallocs   jsonFloat `json:"opa_malloc"`
}

type probeJSON struct {
	ShortChars int              `json:"short_chars"`
	LongChars  int              `json:"long_chars"`
	Probes     []probeCheckJSON `json:"checks"`
}

type probeCheckJSON struct {
	Check     string `json:"check"`
	ShortNs   int64  `json:"short_median_ns"`
	LongNs    int64  `json:"long_median_ns"`
	PerCharNs int64  `json:"per_char_ns"`
}

type engineJSON struct {
	MedianNs          int64   `json:"median_ns"`
	P90Ns             int64   `json:"p90_ns"`
	P99Ns             int64   `json:"p99_ns"`
	MeanNs            int64   `json:"mean_ns"`
	AllocsPerOp       float64 `json:"allocs_per_op"`
	ParallelPerSecond float64 `json:"parallel_decisions_per_s"`
	WrongAnswers      int64   `json:"wrong_answers"`
}

type targetJSON struct {
	Target   string    `json:"target"`
	Measured string    `json:"measured"`
	Value    jsonFloat `json:"value"`
	Met      bool      `json:"met"`
	Limit    string    `json:"limit,omitempty"`
}

// jsonFloat is a float that JSON can carry: NaN and infinities (a
// division by a figure of zero) become 0.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return json.Marshal(v)
}

// json renders docs/BENCHMARKS.json.
func (r report) json() ([]byte, error) {
	doc := reportJSON{
		Generated: r.generated.Format(time.RFC3339),
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		Samples:   r.samples,
		FloorNs:   r.floor.median.Nanoseconds(),
		FloorP99:  r.floor.p99.Nanoseconds(),
		Scenarios: map[string]map[string]engineJSON{},
		Ratios:    map[string]map[string]jsonFloat{},
		Targets:   []targetJSON{},
	}
	for _, sc := range r.scenarios {
		rs := r.results[sc.name]
		if len(rs) == 0 {
			continue
		}
		es := map[string]engineJSON{}
		for _, x := range rs {
			es[x.engine] = engineJSON{MedianNs: x.median.Nanoseconds(), P90Ns: x.p90.Nanoseconds(), P99Ns: x.p99.Nanoseconds(), MeanNs: x.mean.Nanoseconds(),
				AllocsPerOp: x.allocs, ParallelPerSecond: x.parallelOpsPerSec, WrongAnswers: x.wrongDecisionsCount + x.parallelErrors}
		}
		doc.Scenarios[sc.name] = es
		if d, ok := r.wasmBeside[sc.name]; ok {
			if doc.FloorsNs == nil {
				doc.FloorsNs, doc.WasmBesideNs = map[string]int64{}, map[string]int64{}
			}
			doc.FloorsNs[sc.name] = r.floors[sc.name].median.Nanoseconds()
			doc.WasmBesideNs[sc.name] = d.median.Nanoseconds()
		}
		q := map[string]jsonFloat{}
		for k, v := range r.scenarioRatios(sc.name) {
			q[k] = jsonFloat(v)
		}
		doc.Ratios[sc.name] = q
		if sc.samples > 0 {
			if doc.SamplesByScenario == nil {
				doc.SamplesByScenario = map[string]int{}
			}
			doc.SamplesByScenario[sc.name] = sc.samples
		}
	}
	for _, t := range r.targets() {
		doc.Targets = append(doc.Targets, targetJSON{Target: t.what, Measured: t.measured, Value: jsonFloat(t.value), Met: t.met, Limit: t.limit})
	}
	for _, p := range r.profiles {
		if doc.Profiles == nil {
			doc.Profiles = map[string]profileJSON{}
		}
		pj := profileJSON{GuestCalls: jsonFloat(p.totalCalls()), Mallocs: jsonFloat(p.calls("opa_malloc"))}
		for _, st := range p.steps(12) {
			n := float64(p.decisions)
			pj.Steps = append(pj.Steps, stepJSON{Step: stepName(st.name), Calls: jsonFloat(float64(st.calls) / n), Inclusive: jsonFloat(float64(st.inclusive) / n), Mallocs: jsonFloat(float64(st.allocs) / n)})
		}
		doc.Profiles[p.scenario] = pj
	}
	if pr := r.probe; pr != nil {
		doc.CharProbe = &probeJSON{ShortChars: pr.shortChars, LongChars: pr.longChars}
		for _, x := range pr.probes {
			doc.CharProbe.Probes = append(doc.CharProbe.Probes, probeCheckJSON{Check: x.name, ShortNs: x.short.median.Nanoseconds(), LongNs: x.long.median.Nanoseconds(), PerCharNs: pr.perChar(x.name).Nanoseconds()})
		}
	}
	if r.kube != nil {
		doc.KubernetesPolicies = r.kube.raw
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render json: %w", err)
	}
	return append(out, '\n'), nil
}

// renderProfiles is the section of the guest calls of each profiled
// decision and the per-character probe.
func (r report) renderProfiles() string {
	if len(r.profiles) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Where each decision spends its guest calls\n\nCounted on the `wasm` engine in this run with a listener on every guest function (`make profile` prints the same, with the most called functions). A step is the module's `eval` (or, for a module whose layout the host does not write, a phase of `opa_eval`) or a rule or function of the policy; its inclusive count is every guest call made while it runs, so nested steps count in each. Guest calls are not time, but they are stable from run to run where timings are not.\n\n")
	b.WriteString("| decision | guest calls | `opa_malloc` | steps with most calls (inclusive, `opa_malloc`) |\n|---|---|---|---|\n")
	for _, p := range r.profiles {
		var steps []string
		for _, st := range p.innerSteps(6) {
			n := float64(p.decisions)
			steps = append(steps, fmt.Sprintf("`%s` %.0f (%.0f)", stepName(st.name), float64(st.inclusive)/n, float64(st.allocs)/n))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %s |\n", p.scenario, p.totalCalls(), p.calls("opa_malloc"), strings.Join(steps, ", "))
	}
	if pr := r.probe; pr != nil {
		fmt.Fprintf(&b, "\nUser-name probes: modules whose one rule checks `input.user` against YuniKorn's user name rule, with the inputs of `seed` (%d characters) and `seed-long-user` (%d); the first is how the queue decision checks a user name (`regex.match`, served by the host), the others check every character in Rego.\n\n| check | %d characters | %d characters | a character |\n|---|---|---|---|\n", pr.shortChars, pr.longChars, pr.shortChars, pr.longChars)
		for _, x := range pr.probes {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", x.name, us(x.short.median), us(x.long.median), us(pr.perChar(x.name)))
		}
	}
	return b.String()
}
