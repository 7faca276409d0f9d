// Command bench measures every engine side by side on the same bundles and
// inputs, and writes the figures to docs/BENCHMARKS.md. Only ratios taken
// in one run are meaningful; absolute times depend on the machine.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
	"github.com/aclc-dev/aclc/tests/slapd"
	"github.com/aclc-dev/aclc/wasm"
)

const ep = translate.EntrypointYuniKornQueues

type scenario struct {
	name, what string
	ep         string // entry point; the queue decision when empty
	file       string // the name the source is read under (relative paths in it resolve from there)
	src        []byte
	input      []byte
	engines    []engine.Engine
	buildTime  time.Duration // sources → Wasm bundle bytes
	bundleSize int
	// reuse names the scenario whose bundle and engines this one shares: the
	// same configuration asked another decision.
	reuse  *scenario
	queues int
	names  int
	// samples, when set, replaces -samples for a scenario whose slower
	// engines would otherwise make the run too long.
	samples int
}

type result struct {
	engine              string
	median, p90, p99    time.Duration
	mean                time.Duration
	allocs              float64
	parallelOpsPerSec   float64
	parallelGoroutines  int
	parallelErrors      int64
	wrongDecisionsCount int64
}

func main() {
	out := flag.String("out", "docs/BENCHMARKS.md", "markdown `file` to write")
	jsonOut := flag.String("json", "", "JSON `file` to write with the same figures (default: -out with .json for .md)")
	samples := flag.Int("samples", 20000, "timed single decisions per engine")
	// aclc reads at most 1,048,576 YAML nodes of one text (a bound against
	// YAML bombs, one node per byte of a 1 MiB ConfigMap); a ConfigMap of
	// 1 MiB, the most the API server stores, holds about 16,000 generated
	// queues.
	largeQueues := flag.Int("queues", 40000, "queues in the large configuration")
	heapEvals := flag.Int("heap-evals", 10000000, "evaluations of the heap-growth run on the wasm engine")
	parallelFor := flag.Duration("parallel", time.Second, "duration of each parallel throughput run")
	loadWorkers := flag.Int("load-workers", 4, "concurrent keep-alive TLS clients of the webhook load run")
	loadFor := flag.Duration("load", 5*time.Second, "duration of the webhook load run")
	only := flag.String("only", "", "run only this `section`: serve (aclc serve vs stock opa run, and reloads under load); kubernetes (render -kubernetes into the section of -out it rewrites, measuring nothing); config-review (/validate-config on the largest configurations, into the section of -out it rewrites)")
	kubeFigures := flag.String("kubernetes", "", "`file` of the Kubernetes policies figures tests/cel/cmd/kubebench wrote, rendered into their section and carried into the JSON; empty: no such section")
	names := flag.String("scenarios", "", "comma-separated `names` of the scenarios to run; when set, the heap, group resolution, webhook load and serve sections are skipped")
	profile := flag.Bool("profile", false, "print, per decision on the wasm engine, how often each guest function is called, instead of benchmarking")
	profileEvals := flag.Int("profile-evals", 1000, "decisions counted per scenario with -profile")
	pair := flag.Bool("pair", false, "print, per scenario (seed and vov unless -scenarios), the wasm engine's median over the floor's, timed in alternating batches (-samples each), and the guest calls of both, instead of benchmarking")
	aclcBin := flag.String("aclc", "bin/aclc", "aclc `binary` for the serve section (make build)")
	opaBin := flag.String("opa", "bin/opa", "stock opa `binary` for the serve section (the Makefile's bin/opa)")
	serveRequests := flag.Int("serve-requests", 5000, "sequential requests to each server in the serve section")
	reloads := flag.Int("reloads", 100, "source rewrites in the reload run")
	reloadWorkers := flag.Int("reload-workers", 2, "keep-alive clients during the reload run")
	vovObjects := flag.Int("vov-objects", 100000, "generated objects added to the VOV example in the vov-large scenario")
	configRuns := flag.Int("config-runs", 5, "reviews of each configuration in the config-review section")
	flag.Parse()
	ctx := context.Background()
	switch *only {
	case "":
	case "serve":
		fmt.Fprintln(os.Stderr, "aclc serve vs stock opa run")
		md := "# Benchmarks (serve section only)\n\n" + renderServe(serveRun(ctx, *aclcBin, *opaBin, *serveRequests, *reloads, *reloadWorkers))
		check(os.WriteFile(*out, []byte(md), 0o644))
		fmt.Print(md)
		return
	case "kubernetes":
		if *kubeFigures == "" {
			check(errors.New("-only kubernetes: give -kubernetes FILE"))
		}
		k, err := loadKubernetes(*kubeFigures)
		check(err)
		section := k.markdown()
		check(spliceKubernetes(*out, section))
		fmt.Print(section)
		return
	case "config-review":
		rows, err := configReviewRun(ctx, *aclcBin, *configRuns)
		check(err)
		section := renderConfigReview(rows, *configRuns)
		check(spliceSection(*out, configReviewBegin, configReviewEnd, section))
		fmt.Print(section)
		return
	default:
		check(fmt.Errorf("-only %q: want serve, kubernetes or config-review", *only))
	}
	var kube *kubeReport
	if *kubeFigures != "" {
		var err error
		kube, err = loadKubernetes(*kubeFigures)
		check(err)
	}
	if *jsonOut == "" {
		*jsonOut = strings.TrimSuffix(*out, ".md") + ".json"
	}

	all := newScenarios(*samples, *largeQueues, *vovObjects, *profile && *names == "")
	scenarios := all
	if *names != "" {
		var err error
		scenarios, err = selectScenarios(all, *names)
		check(err)
	}
	if *profile {
		if *names == "" {
			scenarios, _ = selectScenarios(all, strings.Join(profiled, ","))
		}
		for _, sc := range scenarios {
			fmt.Fprintf(os.Stderr, "scenario %s: building\n", sc.name)
			n := *profileEvals
			if sc.samples > 0 { // a slow decision, as for its timing
				n = max(n/100, 5)
			}
			p, err := profileScenario(ctx, sc, n)
			check(err)
			fmt.Print(p.render())
		}
		return
	}

	if *pair {
		if *names == "" {
			scenarios, _ = selectScenarios(all, "seed,vov")
		}
		for _, sc := range scenarios {
			fmt.Print(pairScenario(ctx, sc, *samples))
		}
		return
	}

	r := report{kube: kube, generated: time.Now().UTC(), samples: *samples, scenarios: scenarios, results: map[string][]result{}, floors: map[string]result{}, wasmBeside: map[string]result{}}
	for _, sc := range scenarios {
		fmt.Fprintf(os.Stderr, "scenario %s: building\n", sc.name)
		setup(ctx, sc)
		want, err := sc.engines[0].Eval(ctx, sc.entrypoint(), sc.input)
		check(err)
		n := *samples
		if sc.samples > 0 {
			n = sc.samples
		}
		for _, e := range sc.engines {
			fmt.Fprintf(os.Stderr, "scenario %s: engine %s\n", sc.name, e.Name())
			r.results[sc.name] = append(r.results[sc.name], measure(ctx, epEngine{e, sc.entrypoint()}, sc.input, want, n, *parallelFor))
			if e.Name() == engine.Wasm {
				// The floor with the same input, in turns with the
				// decision: a multiple of the floor compares figures of
				// the same moments.
				r.wasmBeside[sc.name], r.floors[sc.name] = pairRun(ctx, epEngine{e, sc.entrypoint()}, sc.input, want, n)
			}
		}
	}
	seed := all[0]
	if f, ok := r.floors[seed.name]; ok {
		r.floor = f
	} else {
		r.floor = floorRun(ctx, seed.input, *samples)
	}
	if long := byName(scenarios, "seed-long-user"); long != nil {
		fmt.Fprintln(os.Stderr, "per-character probe")
		probe := charProbeRun(ctx, seed.input, long.input, *samples)
		r.probe = &probe
	}
	fmt.Fprintln(os.Stderr, "profiles")
	fp, err := profileFloor(ctx, seed.input, 200)
	check(err)
	r.profiles = append(r.profiles, fp)
	for _, sc := range scenarios {
		if !slices.Contains(profiled, sc.name) {
			continue
		}
		n := 200
		if sc.samples > 0 {
			n = 5
		}
		p, err := profileScenario(ctx, sc, n)
		check(err)
		r.profiles = append(r.profiles, p)
	}
	if *names == "" {
		fmt.Fprintln(os.Stderr, "group resolution")
		res := resolutionRun(ctx, seed.src, *samples)
		r.res = &res
		fmt.Fprintln(os.Stderr, "webhook load")
		var admWasm engine.Engine
		for _, e := range byName(all, "admission").engines {
			if e.Name() == engine.Wasm {
				admWasm = e
			}
		}
		load := webhookLoad(ctx, admWasm, byName(all, "admission").input, *loadWorkers, *loadFor)
		r.load = &load
		fmt.Fprintf(os.Stderr, "heap run: %d evaluations\n", *heapEvals)
		heap := heapRun(ctx, seed, *heapEvals)
		r.heap = &heap
		fmt.Fprintln(os.Stderr, "aclc serve vs stock opa run")
		served := serveRun(ctx, *aclcBin, *opaBin, *serveRequests, *reloads, *reloadWorkers)
		r.served = &served
	}
	for _, sc := range all {
		if sc.reuse != nil {
			continue
		}
		for _, e := range sc.engines {
			_ = e.Close(ctx)
		}
	}
	md := r.markdown()
	js, err := r.json()
	check(err)
	// The /validate-config section has a run of its own (make
	// bench-config-review): kept as the last run wrote it.
	if old, err := os.ReadFile(*out); err == nil {
		if i, j := bytes.Index(old, []byte(configReviewBegin)), bytes.Index(old, []byte(configReviewEnd)); i >= 0 && j > i {
			md = strings.TrimRight(md, "\n") + "\n\n" + string(old[i:j+len(configReviewEnd)]) + "\n"
		}
	}
	check(os.WriteFile(*out, []byte(md), 0o644))
	check(os.WriteFile(*jsonOut, js, 0o644))
	fmt.Print(md)
}

// profiled are the decisions -profile reports on when -scenarios is not
// given: the small configurations, each one decision.
var profiled = []string{"seed", "seed-long-user", "large", "admission", "vov", "placement", "admission-queue"}

// newScenarios returns every scenario, the seed first. With small, the
// generated configurations are left small, for a profile that does not
// measure them.
func newScenarios(samples, largeQueues, vovObjects int, small bool) []*scenario {
	if small {
		largeQueues, vovObjects = 200, 200
	}
	seedSrc, err := os.ReadFile("examples/yunikorn/acl-doc.yaml")
	check(err)
	seed := &scenario{name: "seed", what: "`examples/yunikorn/acl-doc.yaml` (YuniKorn ACL docs), `john` in `dev` administers `root.test`",
		src: seedSrc, input: []byte(`{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`)}
	// With groups given, YuniKorn checks the user name against its regex
	// (ConvertUGI), so the longer name costs a longer match on every engine;
	// the colons are valid there. The grant is the same, through dev.
	seedLong := &scenario{name: "seed-long-user", what: "the seed configuration, `" + longUser + "` (48 characters) in `dev` administers `root.test`",
		reuse: seed, input: []byte(`{"queue":"root.test","action":"admin","user":"` + longUser + `","groups":["dev"]}`)}
	lc := gen.Large(largeQueues, 10, 1000000)
	large := &scenario{name: "large", what: fmt.Sprintf("generated: %d queues up to 10 levels deep, %d ACL user and group names; a user listed on the deepest queue", lc.Queues, lc.Names),
		src: lc.YAML, input: []byte(fmt.Sprintf(`{"queue":%q,"action":"submit","user":%q,"groups":["nobody-listed","other"]}`, lc.DeepQueue, lc.DeepUser)),
		queues: lc.Queues, names: lc.Names}

	admSrc, err := os.ReadFile("examples/admission/configmap.yaml")
	check(err)
	admIn, err := os.ReadFile("examples/admission/reviews/pod-create-user.json")
	check(err)
	adm := &scenario{name: "admission", what: "`examples/admission/configmap.yaml`, a user's Pod CREATE (`examples/admission/reviews/pod-create-user.json`) answered with the user.info patch",
		src: admSrc, input: admIn, ep: translate.EntrypointAdmissionReview}
	// Every engine takes tens of milliseconds on it (opa-wasm hundreds):
	// fewer samples keep the run in bounds.
	escape := &scenario{name: "admission-escape-64k", what: "the admission configuration, a Pod CREATE with an unrelated 64 KiB annotation of `<`, which the user.info patch must escape as Go does",
		reuse: adm, input: gen.EscapingReview(64<<10, "<"), ep: translate.EntrypointAdmissionReview, samples: max(samples/100, 50)}

	vovSrc, err := os.ReadFile("examples/vov/acls.yaml")
	check(err)
	vovIn := []byte(`{"object":"00123456","action":"CHOWN","user":"pat","host":"elko"}`)
	vovSeed := &scenario{name: "vov", what: "`examples/vov/acls.yaml` with its security.tcl, `pat` (LEADER from elko) may CHOWN job 00123456",
		src: vovSrc, file: "examples/vov/acls.yaml", input: vovIn, ep: translate.EntrypointVOV}
	vovLarge := &scenario{name: "vov-large", what: fmt.Sprintf("the same project with %d more generated objects (same decision)", vovObjects),
		src: gen.VOVObjects(vovSrc, vovObjects), file: "examples/vov/acls-large.yaml", input: vovIn, ep: translate.EntrypointVOV}
	// Placement on the same configurations and engines as the queue
	// decision: no rules configured, so the implicit provided rule places the
	// application in the queue it names.
	placeSeed := &scenario{name: "placement", what: "the seed configuration, `john` in `dev` placed by the implicit provided rule in `root.test` (`yunikorn/queues/placement`)",
		ep: translate.EntrypointYuniKornPlacement, reuse: seed,
		input: []byte(`{"application":{"id":"app-1","queue":"root.test","user":"john","groups":["dev"],"tags":{"namespace":"team-a"}}}`)}
	placeLarge := &scenario{name: "placement-large", what: fmt.Sprintf("the %d-queue configuration, the deepest queue's user placed there by the implicit provided rule", lc.Queues),
		ep: translate.EntrypointYuniKornPlacement, reuse: large, queues: lc.Queues, names: lc.Names,
		input: []byte(fmt.Sprintf(`{"application":{"id":"app-1","queue":%q,"user":%q,"groups":["nobody-listed","other"]}}`, lc.DeepQueue, lc.DeepUser))}
	// The same depth as the large configuration with few queues: what
	// placement-large costs beyond it is what the number of queues costs.
	dc := gen.Large(200, 10, 2000)
	placeDepth := &scenario{name: "placement-depth", what: fmt.Sprintf("generated: %d queues up to 10 levels deep, the deepest queue's user placed there by the implicit provided rule", dc.Queues),
		ep: translate.EntrypointYuniKornPlacement, src: dc.YAML, queues: dc.Queues, names: dc.Names,
		input: []byte(fmt.Sprintf(`{"application":{"id":"app-1","queue":%q,"user":%q,"groups":["nobody-listed","other"]}}`, dc.DeepQueue, dc.DeepUser))}
	return append([]*scenario{seed, seedLong, large, adm, escape, vovSeed, vovLarge, placeSeed, placeLarge, placeDepth}, queueScenarios(large, lc)...)
}

// longUser is a service account's user name as the API server spells it.
const longUser = "system:serviceaccount:kube-system:job-controller"

// selectScenarios returns the named scenarios in the order of all.
func selectScenarios(all []*scenario, names string) ([]*scenario, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var out []*scenario
	for _, sc := range all {
		if want[sc.name] {
			out = append(out, sc)
			delete(want, sc.name)
		}
	}
	if len(want) > 0 {
		var known []string
		for _, sc := range all {
			known = append(known, sc.name)
		}
		return nil, fmt.Errorf("-scenarios: unknown %v; known: %s", sortedKeys(want), strings.Join(known, ", "))
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func byName(scs []*scenario, name string) *scenario {
	for _, sc := range scs {
		if sc.name == name {
			return sc
		}
	}
	return nil
}

func (sc *scenario) entrypoint() string {
	if sc.ep == "" {
		return ep
	}
	return sc.ep
}

// epEngine evaluates a fixed entry point whatever measure asks for.
type epEngine struct {
	engine.Engine
	ep string
}

func (e epEngine) Eval(ctx context.Context, _ string, input []byte) (json.RawMessage, error) {
	return e.Engine.Eval(ctx, e.ep, input)
}

// sameJSON compares two answers as JSON values: engines may order keys
// differently.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func setup(ctx context.Context, sc *scenario) {
	if o := sc.reuse; o != nil {
		if o.engines == nil {
			setup(ctx, o)
		}
		sc.engines, sc.buildTime, sc.bundleSize = o.engines, o.buildTime, o.bundleSize
		return
	}
	start := time.Now()
	s := &translate.Sources{}
	name := sc.file
	if name == "" {
		name = sc.name + ".yaml"
	}
	check(s.Add(name, sc.src, translate.KindAuto))
	wb, err := translate.WasmBundle(ctx, s)
	check(err)
	raw, err := translate.BundleBytes(wb)
	check(err)
	sc.buildTime, sc.bundleSize = time.Since(start), len(raw)
	rb, err := translate.RegoBundle(s)
	check(err)
	for _, name := range []string{engine.Native, engine.Rego, engine.OPAWasm, engine.Wasm} {
		b := wb
		if name == engine.Rego {
			b = rb
		}
		e, err := engine.Open(ctx, name, engine.Target{Sources: s, Bundle: b})
		check(err)
		sc.engines = append(sc.engines, e)
	}
}

// measure times single decisions one by one (for the median and tails),
// then runs GOMAXPROCS goroutines for a fixed time (for throughput). Every
// answer is compared with the native decision.
func measure(ctx context.Context, e engine.Engine, input, want []byte, samples int, parallelFor time.Duration) result {
	r := result{engine: e.Name()}
	for i := 0; i < samples/10+10; i++ { // warm up
		_, _ = e.Eval(ctx, ep, input)
	}
	durs := make([]time.Duration, samples)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	total := time.Duration(0)
	for i := range durs {
		t0 := time.Now()
		got, err := e.Eval(ctx, ep, input)
		durs[i] = time.Since(t0)
		total += durs[i]
		if err != nil || !sameJSON(got, want) {
			r.wrongDecisionsCount++
		}
	}
	runtime.ReadMemStats(&ms1)
	r.allocs = float64(ms1.Mallocs-ms0.Mallocs) / float64(samples)
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	r.median, r.p90, r.p99 = durs[samples/2], durs[samples*9/10], durs[samples*99/100]
	r.mean = total / time.Duration(samples)

	r.parallelGoroutines = runtime.GOMAXPROCS(0)
	var ops, errs atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(parallelFor)
	for g := 0; g < r.parallelGoroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				for k := 0; k < 64; k++ {
					got, err := e.Eval(ctx, ep, input)
					// Every answer must succeed; one in 64 is also compared
					// as JSON, which would otherwise dominate small decisions.
					if err != nil || (k == 0 && !sameJSON(got, want)) {
						errs.Add(1)
					}
				}
				ops.Add(64)
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	r.parallelOpsPerSec = float64(ops.Load()) / time.Since(start).Seconds()
	r.parallelErrors = errs.Load()
	return r
}

type heapResult struct {
	evals                     int
	goHeapBefore, goHeapAfter uint64
	pagesBefore, pagesAfter   []uint32
	elapsed                   time.Duration
	wrong                     int64
}

// heapRun evaluates the seed decision many times on the wasm engine and
// compares the Go heap and the instances' linear memory before and after.
func heapRun(ctx context.Context, seed *scenario, evals int) heapResult {
	var w *engine.WasmEngine
	for _, e := range seed.engines {
		if x, ok := e.(*engine.WasmEngine); ok {
			w = x
		}
	}
	want, err := w.Eval(ctx, ep, seed.input)
	check(err)
	h := heapResult{evals: evals}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	h.goHeapBefore = ms.HeapInuse
	h.pagesBefore, err = w.Policy().MemoryPages(ctx)
	check(err)
	start := time.Now()
	for i := 0; i < evals; i++ {
		got, err := w.Eval(ctx, ep, seed.input)
		if err != nil || string(got) != string(want) {
			h.wrong++
		}
	}
	h.elapsed = time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	h.goHeapAfter = ms.HeapInuse
	h.pagesAfter, err = w.Policy().MemoryPages(ctx)
	check(err)
	return h
}

func find(rs []result, name string) result {
	for _, r := range rs {
		if r.engine == name {
			return r
		}
	}
	return result{}
}

func us(d time.Duration) string { return fmt.Sprintf("%.2f µs", float64(d)/1e3) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// floorRun measures what the wasm host cannot go below: the evaluation of
// a module whose entry point is a constant, with the same input.
func floorRun(ctx context.Context, input []byte, samples int) result {
	p, err := wasm.Load(ctx, floorBundle(ctx), wasm.NewConfig())
	check(err)
	defer p.Close(ctx)
	e := floorEngine{p}
	return measure(ctx, e, input, []byte("1"), samples, 100*time.Millisecond)
}

// pairBatch is the number of decisions timed in a row before pairRun
// turns to the other engine.
const pairBatch = 250

// pairRun times the decision on e and the floor with the same input in
// alternating batches, so that the medians of a multiple of the floor come
// from the same moments of a machine shared with other work, and returns
// both (medians, tails and wrong answers; no parallel run).
func pairRun(ctx context.Context, e engine.Engine, input, want []byte, samples int) (decision, floor result) {
	p, err := wasm.Load(ctx, floorBundle(ctx), wasm.NewConfig())
	check(err)
	defer p.Close(ctx)
	fl := floorEngine{p}
	for range pairBatch { // warm up
		_, _ = e.Eval(ctx, ep, input)
		_, _ = fl.Eval(ctx, ep, input)
	}
	decision, floor = result{engine: e.Name()}, result{engine: fl.Name()}
	var dd, fd []time.Duration
	for len(dd) < samples {
		n := min(pairBatch, samples-len(dd))
		dd = timeBatch(ctx, e, input, want, n, dd, &decision)
		fd = timeBatch(ctx, fl, input, []byte("1"), n, fd, &floor)
	}
	summarize(&decision, dd)
	summarize(&floor, fd)
	return decision, floor
}

// timeBatch times n decisions one by one, appends their times to ds and
// counts wrong answers in r.
func timeBatch(ctx context.Context, e engine.Engine, input, want []byte, n int, ds []time.Duration, r *result) []time.Duration {
	for range n {
		t0 := time.Now()
		got, err := e.Eval(ctx, ep, input)
		ds = append(ds, time.Since(t0))
		if err != nil || !sameJSON(got, want) {
			r.wrongDecisionsCount++
		}
	}
	return ds
}

// summarize sets r's median, tails and mean from the times ds.
func summarize(r *result, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	r.median, r.p90, r.p99 = ds[len(ds)/2], ds[len(ds)*9/10], ds[len(ds)*99/100]
	r.mean = total / time.Duration(len(ds))
}

type resolution struct {
	explicit, resolved result
	cachedLookup       testing.BenchmarkResult
	// ldapCached and ldapUncached are lookups through the LDAP resolver
	// against a throwaway local slapd; nil when slapd is not installed.
	ldapCached, ldapUncached *testing.BenchmarkResult
	ldapSkipped              string
}

// resolutionRun compares, on one wasm bundle built with the test resolver,
// a decision whose groups come with the request and the same decision
// whose groups the host builtin resolves through the cache; and times a
// warm cache lookup on its own.
func resolutionRun(ctx context.Context, src []byte, samples int) resolution {
	s := &translate.Sources{}
	check(s.Add("seed.yaml", src, translate.KindAuto))
	s, err := s.WithGroupResolution("test", false)
	check(err)
	w, err := engine.Open(ctx, engine.Wasm, engine.Target{Sources: s})
	check(err)
	defer w.Close(ctx)
	explicit := []byte(`{"queue":"root.test","action":"admin","user":"testuser1","groups":["group1000","group1001"]}`)
	resolved := []byte(`{"queue":"root.test","action":"admin","user":"testuser1"}`)
	want, err := w.Eval(ctx, ep, explicit)
	check(err)
	var r resolution
	r.explicit = measure(ctx, w, explicit, want, samples, 100*time.Millisecond)
	r.resolved = measure(ctx, w, resolved, want, samples, 100*time.Millisecond)
	c := builtins.NewCache(builtins.TestResolver{}, builtins.SystemClock{})
	c.Groups("testuser1")
	r.cachedLookup = testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Groups("testuser1")
		}
	})
	r.ldapCached, r.ldapUncached, r.ldapSkipped = ldapLookups()
	return r
}

// ldapLookups times a cached and an uncached LDAP group lookup (dial, bind,
// search, close) against a local slapd started for the purpose.
func ldapLookups() (cached, uncached *testing.BenchmarkResult, skipped string) {
	bin := slapd.Binary()
	if bin == "" {
		return nil, nil, "slapd is not installed (make slapd)"
	}
	srv, err := slapd.Start(bin)
	if err != nil {
		return nil, nil, "slapd did not start: " + err.Error()
	}
	defer srv.Stop()
	dir, err := os.MkdirTemp("", "aclc-bench-ldap-")
	check(err)
	defer os.RemoveAll(dir)
	check(slapd.WriteSecret(dir, srv.Secret()))
	r, err := builtins.LoadLDAPResolver(dir)
	check(err)
	c := builtins.NewCache(r, builtins.SystemClock{})
	if _, msg := c.Groups("alice"); msg != "" {
		check(errors.New(msg))
	}
	cr := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Groups("alice")
		}
	})
	ur := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Resolve("alice"); err != nil {
				b.Fatal(err)
			}
		}
	})
	return &cr, &ur, ""
}

// probeResult times checks of a user name against YuniKorn's rule, each
// alone in a module, on a short and a long name: the policy's (regex.match,
// which the host serves) and the two ways of checking every character in
// Rego (split, then a table lookup a character; trim_left over the class).
type probeResult struct {
	shortChars, longChars int
	probes                []probe
}

type probe struct {
	name        string
	short, long result
}

// perChar is a probe's cost of one more character.
func (p probeResult) perChar(name string) time.Duration {
	for _, x := range p.probes {
		if x.name == name {
			return (x.long.median - x.short.median) / time.Duration(p.longChars-p.shortChars)
		}
	}
	return 0
}

// userNameClass is the character class of YuniKorn's user names after the
// first character.
const userNameClass = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:#/_.@-"

// userNameProbes are the checks the probe times, each the body of the
// rule x; the first is the policy's.
var userNameProbes = []struct{ name, body string }{
	{"regex.match", "regex.match(`^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`, input.user)"},
	{"split and a table", "chars := split(input.user, \"\")\n\tt := data.chars\n\tevery c in chars {\n\t\tt[c]\n\t}"},
	{"trim_left", "trim_left(input.user, \"" + userNameClass + "\") == \"\""},
}

// charProbeRun runs the per-character probes with the inputs of the seed
// and seed-long-user scenarios.
func charProbeRun(ctx context.Context, short, long []byte, samples int) probeResult {
	var chars strings.Builder
	chars.WriteString(`{"chars":{`)
	for i, c := range userNameClass {
		if i > 0 {
			chars.WriteString(",")
		}
		fmt.Fprintf(&chars, "%q:true", string(c))
	}
	chars.WriteString("}}")
	user := func(in []byte) int {
		var v struct{ User string }
		check(json.Unmarshal(in, &v))
		return utf8.RuneCountInString(v.User)
	}
	r := probeResult{shortChars: user(short), longChars: user(long)}
	for _, pr := range userNameProbes {
		raw := wasmBundle(ctx, "probe/x", fstest.MapFS{
			"probe.rego": {Data: []byte("package probe\n\nx if {\n\t" + pr.body + "\n}\n")},
			"data.json":  {Data: []byte(chars.String())},
		})
		p, err := wasm.Load(ctx, raw, wasm.NewConfig())
		check(err)
		e := probeEngine{p}
		r.probes = append(r.probes, probe{name: pr.name, short: measure(ctx, e, short, []byte("true"), samples, 0), long: measure(ctx, e, long, []byte("true"), samples, 0)})
		check(p.Close(ctx))
	}
	return r
}

type probeEngine struct{ p *wasm.Policy }

func (probeEngine) Name() string { return "wasm, per-character probe" }
func (e probeEngine) Eval(ctx context.Context, _ string, input []byte) (json.RawMessage, error) {
	return e.p.Eval(ctx, "probe/x", input)
}
func (probeEngine) Close(context.Context) error { return nil }

// floorBundle is the Wasm bundle of the floor: the constant rule floor/x.
func floorBundle(ctx context.Context) []byte {
	return wasmBundle(ctx, "floor/x", fstest.MapFS{"floor.rego": {Data: []byte("package floor\n\nx := 1\n")}})
}

// wasmBundle compiles the modules and data files of fsys to a Wasm bundle
// with one entry point.
func wasmBundle(ctx context.Context, ep string, fsys fstest.MapFS) []byte {
	var paths []string
	for p := range fsys {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	c := compile.New().WithTarget(compile.TargetWasm).WithEntrypoints(ep).WithFS(fsys).WithPaths(paths...)
	check(c.Build(ctx))
	var buf bytes.Buffer
	check(bundle.NewWriter(&buf).Write(*c.Bundle()))
	return buf.Bytes()
}

type floorEngine struct{ p *wasm.Policy }

func (floorEngine) Name() string { return "wasm, constant rule" }
func (f floorEngine) Eval(ctx context.Context, _ string, input []byte) (json.RawMessage, error) {
	return f.p.Eval(ctx, "floor/x", input)
}
func (floorEngine) Close(context.Context) error { return nil }
