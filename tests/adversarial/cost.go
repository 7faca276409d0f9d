package adversarial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
	"github.com/aclc-dev/aclc/tests"
	"github.com/aclc-dev/aclc/wasm"
)

// The cost contract: every decision takes time growing at most linearly in
// its input, and the largest input the API server lets through, shaped to
// hurt, is decided within ContractLimit with native's answer, on every
// engine.
const (
	ContractLimit = time.Second
	// SuperLinear is the growth factor (time at the full size over time at
	// half of it) past which a cell is flagged: a linear cost doubles, a
	// quadratic one quadruples.
	SuperLinear = 3.5
	// GrowthFloor is the time at full size below which a growth factor is
	// not judged: below it, noise (a collection, a busy neighbour) weighs
	// more than the input.
	GrowthFloor = 20 * time.Millisecond
)

// The engines the cost is measured on, beyond the in-process ones:
// aclc serve over HTTP, and aclc webhook (its default wasm engine) for the
// admission entry points.
const (
	CostServe   = "serve"
	CostWebhook = "webhook"
)

// CostOptions size a cost run.
type CostOptions struct {
	// Cut ends an evaluation that takes longer: the size and every larger
	// one count as over the cut.
	Cut time.Duration
	// Runs is how many times a size is decided (the median is kept); a
	// decision over slowRun is decided once.
	Runs int
	// Fractions are the sizes measured, as divisors of the full size, in
	// any order: 8, 4, 2, 1 measures 1/8, 1/4, 1/2 and all of it. The last
	// two sizes give the growth factor.
	Fractions []int
	// Only, when set, keeps the inputs it returns true for.
	Only func(CostInput) bool
	// Progress, when set, gets a line per input and engine as it is done.
	Progress io.Writer
}

// slowRun is the time past which one run of a size is enough: a second
// costs more than the noise it averages out.
const slowRun = 250 * time.Millisecond

// CostCell is one input decided on one engine at every size.
type CostCell struct {
	Input  CostInput
	Engine string
	Sizes  []int
	// Times are the median times per size; zero past a cut.
	Times []time.Duration
	// CutAt is the index of the first size cut (len(Sizes) when none was).
	CutAt int
	// Differs says how the answer differed from native's at the first
	// size where it did ("" when it never did); a cut evaluation has no
	// answer and is not counted here.
	Differs string
}

// Full is the time at the full size, and whether it was measured (false:
// cut, at that size or a smaller one).
func (c CostCell) Full() (time.Duration, bool) {
	if c.CutAt < len(c.Sizes) {
		return 0, false
	}
	return c.Times[len(c.Times)-1], true
}

// Growth is the time at the full size over the time at the size before it;
// exact is false when the full size was cut (the factor is then at least
// the cut over the time before it) or not enough was measured (0).
func (c CostCell) Growth(cut time.Duration) (factor float64, exact bool) {
	n := len(c.Sizes)
	if n < 2 || c.CutAt < n-1 {
		return 0, false
	}
	prev := c.Times[n-2]
	if prev <= 0 {
		prev = time.Microsecond
	}
	if c.CutAt == n-1 {
		return float64(cut) / float64(prev), false
	}
	return float64(c.Times[n-1]) / float64(prev), true
}

// TimeNotBound are the engines whose time at the full size aclc cannot
// bound, with why: their contract is linear growth and native's answers.
var TimeNotBound = map[string]string{
	engine.OPAWasm: "OPA's Wasm SDK compiles the guest with wazero's close-on-context-done check, " +
		"an exit from the compiled code to Go at every loop iteration that the SDK does not let a caller turn off; " +
		"the same module on aclc's host, which checks its deadline inside the guest, keeps the bound",
}

// Holds says whether the cell keeps the contract: decided within
// ContractLimit at full size, with native's answer; on an engine whose
// time aclc cannot bound (TimeNotBound), decided at full size with
// native's answer and a growth that is not super-linear.
func (c CostCell) Holds(cut time.Duration) bool {
	t, ok := c.Full()
	if !ok || c.Differs != "" {
		return false
	}
	if _, free := TimeNotBound[c.Engine]; free {
		return !c.SuperLinear(cut)
	}
	return t <= ContractLimit
}

// SuperLinear says whether the cell's growth is past SuperLinear (or cut
// after a size that was measured).
func (c CostCell) SuperLinear(cut time.Duration) bool {
	g, exact := c.Growth(cut)
	if !exact {
		return g > SuperLinear
	}
	t, _ := c.Full()
	return t >= GrowthFloor && g > SuperLinear
}

// costEngine decides an entry point and says whether its answer is
// native's.
type costEngine struct {
	name string
	eval func(ctx context.Context, ep string, input []byte) ([]byte, error)
	// same compares an answer with native's: the decision object, or for
	// the webhook the review's response.
	same func(native, got []byte) bool
}

// costSet is every engine over one source, native first.
type costSet struct {
	engines []costEngine
	close   func()
}

// openCostSet opens the in-process engines, aclc serve on loopback and,
// when the source carries admission decisions, aclc webhook.
func openCostSet(ctx context.Context, file string, admission bool) *costSet {
	src, err := os.ReadFile(file)
	check(err)
	set, err := tests.NewEngineSet(ctx, tests.Single(file, src), "", nil)
	check(err)
	cs := &costSet{}
	var closers []func()
	closers = append(closers, func() { set.Close(ctx) })
	for _, e := range set.Engines {
		if e.Name() == tests.RegoStatic {
			continue // the rego engine's cost, on other data
		}
		cs.engines = append(cs.engines, costEngine{e.Name(), func(ctx context.Context, ep string, in []byte) ([]byte, error) { return e.Eval(ctx, ep, in) }, tests.SameJSON})
	}

	srv, err := serve.New(ctx, serve.NewConfig().WithAddr("127.0.0.1:0").WithSources(file).
		WithLogLevel("error").WithLogOutput(io.Discard).WithReloadInterval(0))
	check(err)
	sctx, stop := context.WithCancel(ctx)
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- srv.Serve(sctx, func(a string) { ready <- a }) }()
	select {
	case addr := <-ready:
		h, err := engine.NewHTTP("http://" + addr)
		check(err)
		cs.engines = append(cs.engines, costEngine{CostServe, func(ctx context.Context, ep string, in []byte) ([]byte, error) { return h.Eval(ctx, ep, in) }, tests.SameJSON})
	case err := <-done:
		check(fmt.Errorf("aclc serve %s: %w", file, err))
	}
	closers = append(closers, func() { stop(); <-done })

	if admission {
		wh := webhook.New(keepOpen{pick(set, engine.Wasm)}, webhook.NewConfig().WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		hs := httptest.NewServer(wh.Handler())
		closers = append(closers, hs.Close)
		client := &http.Client{}
		cs.engines = append(cs.engines, costEngine{CostWebhook, func(ctx context.Context, ep string, in []byte) ([]byte, error) {
			path := "/mutate"
			if ep == translate.EntrypointAdmissionQueue {
				path = "/validate-queue"
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+path, bytes.NewReader(in))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, out)
			}
			return out, err
		}, sameResponse})
	}
	cs.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	return cs
}

// reviewResponse is what the API server reads of a review's answer. A
// validating webhook sends no patch, so the patch is compared only when
// both carry one.
type reviewResponse struct {
	Response struct {
		UID      string   `json:"uid"`
		Allowed  bool     `json:"allowed"`
		Patch    string   `json:"patch"`
		Warnings []string `json:"warnings"`
		Status   struct {
			Message string `json:"message"`
		} `json:"status"`
	} `json:"response"`
}

func sameResponse(native, got []byte) bool {
	var a, b reviewResponse
	if json.Unmarshal(native, &a) != nil || json.Unmarshal(got, &b) != nil {
		return false
	}
	if a.Response.Patch == "" || b.Response.Patch == "" {
		a.Response.Patch, b.Response.Patch = "", ""
	}
	ra, _ := json.Marshal(a.Response)
	rb, _ := json.Marshal(b.Response)
	return bytes.Equal(ra, rb)
}

// allowOf reads the allow of a decision or the allowed of a review, for
// the report of a difference.
func allowOf(out []byte) string {
	var d struct {
		Allow    *bool `json:"allow"`
		Response *struct {
			Allowed bool `json:"allowed"`
		} `json:"response"`
	}
	switch {
	case json.Unmarshal(out, &d) != nil:
		return "no decision"
	case d.Allow != nil:
		return map[bool]string{true: "allows", false: "denies"}[*d.Allow]
	case d.Response != nil:
		return map[bool]string{true: "allows", false: "denies"}[d.Response.Allowed]
	}
	return "no decision"
}

// Cost decides every worst-case input (CostInputs) at every size on every
// engine, native first, and returns the cells with a Markdown report.
func Cost(ctx context.Context, o CostOptions) (cells []CostCell, md string, err error) {
	defer recoverSetup(&err)
	fracs := append([]int(nil), o.Fractions...)
	sort.Sort(sort.Reverse(sort.IntSlice(fracs)))
	runs := max(o.Runs, 1)
	var inputs []CostInput
	for _, in := range CostInputs() {
		if o.Only == nil || o.Only(in) {
			inputs = append(inputs, in)
		}
	}
	floors := openFloors(ctx)
	defer floors.close()
	floorTimes := map[string][]time.Duration{}
	// One set of engines per source, opened when first needed.
	sets := map[string]*costSet{}
	defer func() {
		for _, s := range sets {
			s.close()
		}
	}()
	for _, in := range inputs {
		file := costSources[in.Entrypoint]
		cs := sets[file]
		if cs == nil {
			cs = openCostSet(ctx, file, strings.HasPrefix(file, "examples/admission/"))
			sets[file] = cs
		}
		sizes := make([]int, len(fracs))
		bodies := make([][]byte, len(fracs))
		for i, f := range fracs {
			sizes[i] = max(in.Full/f, 1)
			bodies[i] = in.Make(sizes[i])
		}
		var native [][]byte
		for _, e := range cs.engines {
			if e.name == CostWebhook && in.Entrypoint != translate.EntrypointAdmissionReview && in.Entrypoint != translate.EntrypointAdmissionQueue {
				continue
			}
			cell := costCell(ctx, e, in, sizes, bodies, native, o.Cut, runs)
			if native == nil {
				native = cell.answers
			}
			if o.Progress != nil {
				g, _ := cell.Growth(o.Cut)
				fmt.Fprintf(o.Progress, "%s on %s: %s (×%.1f) %s\n", in.Name, e.name, fullTime(cell.CostCell, o.Cut), g, cell.Differs)
			}
			cells = append(cells, cell.CostCell)
		}
		floorTimes[in.Name] = floors.measure(ctx, bodies[len(bodies)-1], runs)
	}
	return cells, costReport(cells, o, inputs, floors.names, floorTimes), nil
}

// costFloors are the Wasm engines over a policy that reads nothing (the
// constant rule floor/x): what an engine spends taking an input, before
// any decision reads it.
type costFloors struct {
	names   []string
	engines []engine.Engine
}

func openFloors(ctx context.Context) *costFloors {
	c := compile.New().WithTarget(compile.TargetWasm).WithEntrypoints("floor/x").
		WithFS(fstest.MapFS{"floor.rego": {Data: []byte("package floor\n\nx := 1\n")}}).WithPaths("floor.rego")
	check(c.Build(ctx))
	raw, err := translate.BundleBytes(c.Bundle())
	check(err)
	w, err := engine.NewWasm(ctx, raw, wasm.NewConfig(), nil)
	check(err)
	ow, err := engine.NewOPAWasm(ctx, c.Bundle(), nil)
	check(err)
	return &costFloors{names: []string{engine.Wasm, engine.OPAWasm}, engines: []engine.Engine{w, ow}}
}

// measure is the median time of each floor engine taking body.
func (f *costFloors) measure(ctx context.Context, body []byte, runs int) []time.Duration {
	out := make([]time.Duration, len(f.engines))
	for i, e := range f.engines {
		var ts []time.Duration
		for range runs + 1 { // the first warms the engine
			runtime.GC()
			t0 := time.Now()
			_, err := e.Eval(ctx, "floor/x", body)
			check(err)
			ts = append(ts, time.Since(t0))
		}
		ts = ts[1:]
		sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
		out[i] = ts[len(ts)/2]
	}
	return out
}

func (f *costFloors) close() {
	for _, e := range f.engines {
		_ = e.Close(context.Background())
	}
}

type measuredCell struct {
	CostCell
	answers [][]byte
}

// costCell decides in on e at every size, smallest first, stopping at the
// first size over the cut. Its first decision warms the engine and is not
// counted.
func costCell(ctx context.Context, e costEngine, in CostInput, sizes []int, bodies, native [][]byte, cut time.Duration, runs int) measuredCell {
	c := measuredCell{CostCell: CostCell{Input: in, Engine: e.name, Sizes: sizes, Times: make([]time.Duration, len(sizes)), CutAt: len(sizes)}, answers: make([][]byte, len(sizes))}
	decide := func(body []byte) ([]byte, time.Duration, error) {
		// Each decision starts on a collected heap: the garbage of the last
		// one is not charged to it.
		runtime.GC()
		ectx, cancel := context.WithTimeout(ctx, cut)
		defer cancel()
		t0 := time.Now()
		out, err := e.eval(ectx, in.Entrypoint, body)
		d := time.Since(t0)
		if d >= cut || errors.Is(err, context.DeadlineExceeded) || ectx.Err() != nil {
			return nil, cut, context.DeadlineExceeded
		}
		return out, d, err
	}
	if _, _, err := decide(bodies[0]); errors.Is(err, context.DeadlineExceeded) {
		c.CutAt = 0
		return c
	}
	for i, body := range bodies {
		var times []time.Duration
		var out []byte
		var err error
		for r := 0; r < runs; r++ {
			var d time.Duration
			out, d, err = decide(body)
			if errors.Is(err, context.DeadlineExceeded) {
				c.CutAt = i
				return c
			}
			times = append(times, d)
			if d > slowRun {
				break
			}
		}
		sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
		c.Times[i] = times[len(times)/2]
		c.answers[i] = out
		if c.Differs != "" || native == nil {
			continue
		}
		switch {
		case err != nil:
			c.Differs = fmt.Sprintf("at %d %s: error (%s), native %s", sizes[i], in.Unit, firstLine(err.Error()), allowOf(native[i]))
		case native[i] == nil:
			// native itself was cut: nothing to compare with
		case !e.same(native[i], out):
			c.Differs = fmt.Sprintf("at %d %s: %s, native %s", sizes[i], in.Unit, allowOf(out), allowOf(native[i]))
			if allowOf(out) == allowOf(native[i]) {
				c.Differs += ", with another answer"
			}
		}
	}
	return c
}

// costReport is the RELIABILITY section: per entry point and engine the
// worst input, then every input on every engine.
func costReport(cells []CostCell, o CostOptions, inputs []CostInput, floorNames []string, floors map[string][]time.Duration) string {
	var b strings.Builder
	fracs := append([]int(nil), o.Fractions...)
	sort.Sort(sort.Reverse(sort.IntSlice(fracs)))
	var sizes []string
	for _, f := range fracs {
		if f == 1 {
			sizes = append(sizes, "all of its full size")
		} else {
			sizes = append(sizes, fmt.Sprintf("1/%d", f))
		}
	}
	fmt.Fprintf(&b, "## Cost of the largest inputs\n\nThe contract: every decision takes time growing at most linearly in its input, and the largest input the Kubernetes API server lets through (%d KiB of annotations, keys and values; a %d MiB object), shaped to hurt, is decided in at most %s with native's answer, on every engine: the in-process ones, `aclc serve` over HTTP on loopback and, for the admission entry points, `aclc webhook` (in process, its default wasm engine, plain HTTP on loopback); OPA's own Wasm engine is held to the answers and the growth, not the time (why below the table). "+
		"Each input below is decided at %s, the median of up to %d runs on a warm engine (one run when it takes more than %s), each evaluation cut after %s. "+
		"The growth factor is the time at the full size over the time at half of it: about 2 for a linear cost, 4 for a quadratic one; over %.1f it is flagged as super-linear (where the full size takes %s or more; below that noise decides).\n\n",
		2*128, 3, dur(ContractLimit), strings.Join(sizes, ", "), max(o.Runs, 1), dur(slowRun), dur(o.Cut), SuperLinear, dur(GrowthFloor))

	type key struct{ ep, engine string }
	var order []key
	byKey := map[key][]CostCell{}
	for _, c := range cells {
		k := key{c.Input.Entrypoint, c.Engine}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	b.WriteString("| entry point | engine | slowest input at full size | time | growth | answers | contract |\n|---|---|---|---:|---:|---|---|\n")
	var broken []string
	for _, k := range order {
		cs := byKey[k]
		worst := cs[0]
		for _, c := range cs[1:] {
			if worse(c, worst) {
				worst = c
			}
		}
		differ := 0
		for _, c := range cs {
			if c.Differs != "" {
				differ++
			}
		}
		answers := fmt.Sprintf("native's (%d inputs)", len(cs))
		if differ > 0 {
			answers = fmt.Sprintf("**%d of %d differ**", differ, len(cs))
		}
		holds := differ == 0
		for _, c := range cs {
			holds = holds && c.Holds(o.Cut)
		}
		verdict := "holds"
		if _, free := TimeNotBound[k.engine]; free && holds {
			verdict = "holds: linear, native's answers; time not bound (below)"
			if t, _ := worst.Full(); t <= ContractLimit {
				verdict = "holds, and within the bound"
			}
		}
		if !holds {
			verdict = "**broken**"
			broken = append(broken, fmt.Sprintf("`%s` on %s", k.ep, k.engine))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", k.ep, k.engine, worst.Input.Name, fullTime(worst, o.Cut), growth(worst, o.Cut), answers, verdict)
	}
	var free []string
	for _, k := range order {
		if _, ok := TimeNotBound[k.engine]; ok && !slices.Contains(free, k.engine) {
			free = append(free, k.engine)
		}
	}
	sort.Strings(free)
	for _, e := range free {
		fmt.Fprintf(&b, "\nOn %s the time at the full size is not bound: %s. Its contract is the rest: native's answer on every input, and a growth that stays linear.\n", e, TimeNotBound[e])
	}
	if len(broken) == 0 {
		fmt.Fprintf(&b, "\nThe contract holds on every entry point and engine.\n\n")
	} else {
		fmt.Fprintf(&b, "\nThe contract is broken on %d of %d: %s.\n\n", len(broken), len(order), strings.Join(broken, ", "))
	}

	// Every input on every engine.
	var engines []string
	seen := map[string]bool{}
	for _, c := range cells {
		if !seen[c.Engine] {
			seen[c.Engine] = true
			engines = append(engines, c.Engine)
		}
	}
	var floorCols []string
	for _, n := range floorNames {
		floorCols = append(floorCols, "floor: "+n)
	}
	b.WriteString("### Every input\n\nTime at the full size (growth factor); ≠ marks an answer that is not native's, explained below the table. " +
		"The floor columns are the time the Wasm engines take to be given the same input at its full size and answer a constant (a policy that reads nothing): the part of a cell that no policy can remove. " +
		"OPA's own Wasm engine runs the guest with wazero's close-on-context-done check, an exit from the compiled code to Go at every loop iteration, so each pass over an input costs it several times what it costs aclc's host (which checks its deadline inside the guest).\n\n" +
		"| input | full size | " + strings.Join(append(append([]string(nil), engines...), floorCols...), " | ") + " |\n|---|---:|" + strings.Repeat("---:|", len(engines)+len(floorCols)) + "\n")
	var diffs []string
	for _, in := range inputs {
		fmt.Fprintf(&b, "| `%s` %s | %d %s |", in.Entrypoint, in.What, in.Full, in.Unit)
		for _, en := range engines {
			var cell *CostCell
			for i := range cells {
				if cells[i].Input.Name == in.Name && cells[i].Engine == en {
					cell = &cells[i]
				}
			}
			if cell == nil {
				b.WriteString(" |")
				continue
			}
			mark := ""
			if cell.Differs != "" {
				mark = " ≠"
				diffs = append(diffs, fmt.Sprintf("%s on %s %s", in.Name, en, cell.Differs))
			}
			fmt.Fprintf(&b, " %s (%s)%s |", fullTime(*cell, o.Cut), growth(*cell, o.Cut), mark)
		}
		for i := range floorNames {
			if ts := floors[in.Name]; i < len(ts) {
				fmt.Fprintf(&b, " %s |", dur(ts[i]))
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if len(diffs) > 0 {
		b.WriteString("Answers that are not native's: " + strings.ReplaceAll(strings.Join(diffs, "; "), "|", "\\|") + ".\n\n")
	}
	return b.String()
}

// worse orders cells by cost: cut at a smaller size first, then the time
// at full size.
func worse(a, b CostCell) bool {
	if a.CutAt != b.CutAt {
		return a.CutAt < b.CutAt
	}
	ta, _ := a.Full()
	tb, _ := b.Full()
	return ta > tb
}

func fullTime(c CostCell, cut time.Duration) string {
	t, ok := c.Full()
	switch {
	case !ok && c.CutAt == len(c.Sizes)-1:
		return fmt.Sprintf("**> %s**", dur(cut))
	case !ok:
		return fmt.Sprintf("**> %s at %d %s**", dur(cut), c.Sizes[c.CutAt], c.Input.Unit)
	case t > ContractLimit:
		if _, free := TimeNotBound[c.Engine]; !free {
			return "**" + dur(t) + "**"
		}
	}
	return dur(t)
}

func growth(c CostCell, cut time.Duration) string {
	g, exact := c.Growth(cut)
	switch {
	case g == 0:
		return "–"
	case !exact && c.SuperLinear(cut):
		return fmt.Sprintf("**> ×%.1f**", g)
	case !exact:
		return fmt.Sprintf("> ×%.1f", g)
	case c.SuperLinear(cut):
		return fmt.Sprintf("**×%.1f**", g)
	}
	return fmt.Sprintf("×%.1f", g)
}

// dur prints a time with three significant figures.
func dur(d time.Duration) string {
	switch s := d.Seconds(); {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 0.001:
		return fmt.Sprintf("%.*f ms", max(0, 2-int(math.Floor(math.Log10(s*1000)))), s*1000)
	default:
		return fmt.Sprintf("%.0f µs", s*1e6)
	}
}
