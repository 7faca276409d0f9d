package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// requiredScenarios are the scenarios docs/BENCHMARKS.json must carry.
var requiredScenarios = []string{"seed", "seed-long-user", "large", "admission", "admission-escape-64k", "vov", "vov-large", "placement"}

// fakeReport is a run with made-up figures, distinct for every scenario
// and engine, and none of the optional sections.
func fakeReport() report {
	r := report{generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), samples: 100, results: map[string][]result{},
		floor: result{engine: "wasm, constant rule", median: 3210 * time.Nanosecond, p99: 4567 * time.Nanosecond},
		// The vov scenario has a floor of its own, timed in turns with
		// its wasm engine.
		floors:     map[string]result{"vov": {engine: "wasm, constant rule", median: 1234 * time.Nanosecond}},
		wasmBeside: map[string]result{"vov": {engine: "wasm", median: 5555 * time.Nanosecond}}}
	names := append(requiredScenarios, "placement-large", "placement-depth", "admission-queue")
	byName := map[string]*scenario{}
	for i, n := range names {
		sc := &scenario{name: n, what: "what " + n, buildTime: time.Duration(i+1) * time.Second, bundleSize: 1000 + i, queues: 10 * i}
		if n == "seed-long-user" {
			sc.reuse = byName["seed"]
		}
		if n == "admission-escape-64k" {
			sc.reuse, sc.samples = byName["admission"], 7
		}
		byName[n] = sc
		r.scenarios = append(r.scenarios, sc)
		for j, e := range engines {
			ns := time.Duration(1000*(i+1)+100*j+7) * time.Nanosecond
			r.results[n] = append(r.results[n], result{engine: e, median: ns, p90: ns + 11, p99: 2*ns + 13, mean: ns + 17,
				allocs: float64(j), parallelOpsPerSec: 1e6 / float64(i+j+1), parallelGoroutines: 2})
		}
	}
	return r
}

// TestReportShape: the JSON has floor_ns and, for every required scenario
// and engine, median_ns and p99_ns as whole numbers.
func TestReportShape(t *testing.T) {
	js, err := fakeReport().json()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FloorNs   json.Number                                  `json:"floor_ns"`
		Scenarios map[string]map[string]map[string]json.Number `json:"scenarios"`
	}
	d := json.NewDecoder(strings.NewReader(string(js)))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, js)
	}
	isInt := func(n json.Number) bool { _, err := n.Int64(); return err == nil }
	if !isInt(doc.FloorNs) || doc.FloorNs.String() != "3210" {
		t.Errorf("floor_ns = %q, want 3210", doc.FloorNs)
	}
	for _, sc := range requiredScenarios {
		es, ok := doc.Scenarios[sc]
		if !ok {
			t.Errorf("scenario %s missing", sc)
			continue
		}
		for _, e := range engines {
			for _, k := range []string{"median_ns", "p99_ns"} {
				if v, ok := es[e][k]; !ok || !isInt(v) {
					t.Errorf("scenarios.%s.%s.%s = %q, want a whole number", sc, e, k, v)
				}
			}
		}
	}
}

// TestReportAgrees: every figure of the JSON is the one the Markdown
// shows: each engine's row of each scenario, the floor, the ratios under
// each table and the targets with their verdicts.
func TestReportAgrees(t *testing.T) {
	r := fakeReport()
	md := r.markdown()
	js, err := r.json()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FloorNs    int64                                    `json:"floor_ns"`
		FloorsNs   map[string]int64                         `json:"floor_ns_by_scenario"`
		WasmBeside map[string]int64                         `json:"wasm_beside_floor_ns_by_scenario"`
		Scenarios  map[string]map[string]map[string]float64 `json:"scenarios"`
		Ratios     map[string]map[string]float64            `json:"ratios"`
		Targets    []struct {
			Target, Measured string
			Met              bool
		} `json:"targets"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	ns := func(v float64) string { return us(time.Duration(v)) }
	sections := strings.Split(md, "\n## ")
	section := func(name string) string {
		for _, s := range sections {
			if strings.HasPrefix(s, name+": ") {
				return s
			}
		}
		return ""
	}
	if len(doc.Scenarios) != len(r.scenarios) {
		t.Errorf("JSON has %d scenarios, the run %d", len(doc.Scenarios), len(r.scenarios))
	}
	for name, es := range doc.Scenarios {
		s := section(name)
		if s == "" {
			t.Errorf("scenario %s: no Markdown section", name)
			continue
		}
		for e, f := range es {
			row := fmt.Sprintf("| %s | %s | %s | %s | %s | %.1f | %.0f decisions/s | %d |", e, ns(f["median_ns"]), ns(f["p90_ns"]), ns(f["p99_ns"]), ns(f["mean_ns"]), f["allocs_per_op"], f["parallel_decisions_per_s"], int64(f["wrong_answers"]))
			if !strings.Contains(s, row+"\n") {
				t.Errorf("scenario %s: the Markdown has no row %s", name, row)
			}
		}
		q := doc.Ratios[name]
		line := fmt.Sprintf("Ratios (median): opa-wasm / wasm = %.1f×, rego / wasm = %.1f×, wasm / native = %.2f×, wasm / floor = %.2f×.", q["opa-wasm/wasm"], q["rego/wasm"], q["wasm/native"], q["wasm/floor"])
		if !strings.Contains(s, line) {
			t.Errorf("scenario %s: the Markdown has no line %s", name, line)
		}
		floor, wasmNs := doc.FloorNs, int64(es["wasm"]["median_ns"])
		if f, ok := doc.FloorsNs[name]; ok {
			floor, wasmNs = f, doc.WasmBeside[name]
			if line := fmt.Sprintf("The floor with this input, timed in alternating batches with the `wasm` engine: median %s, the `wasm` engine in the same batches %s; wasm / floor divides these two.\n", ns(float64(f)), ns(float64(wasmNs))); !strings.Contains(s, line) {
				t.Errorf("scenario %s: the Markdown has no line %s", name, line)
			}
		}
		if want := float64(wasmNs) / float64(floor); fmt.Sprintf("%.4f", q["wasm/floor"]) != fmt.Sprintf("%.4f", want) {
			t.Errorf("scenario %s: wasm/floor = %v, want %v", name, q["wasm/floor"], want)
		}
	}
	if !strings.Contains(md, "(the floor): median "+us(time.Duration(doc.FloorNs))+",") {
		t.Errorf("the Markdown does not state the floor of %d ns", doc.FloorNs)
	}
	// The targets the brief names, all computable from the fake run.
	for _, want := range []string{"seed-long-user / seed", "large / seed", "seed on `wasm` ≤ 2.5× the floor", "`opa-wasm` / `wasm` ≥ 12×", "`rego` / `wasm` ≥ 15×", "admission on `wasm` ≤ 1.5× `native`", "VOV on `wasm` ≤ 3× the floor"} {
		found := false
		for _, tg := range doc.Targets {
			found = found || strings.Contains(tg.Target, want)
		}
		if !found {
			t.Errorf("no target %q in the JSON", want)
		}
	}
	for _, tg := range doc.Targets {
		row := fmt.Sprintf("| %s | %s | %s |\n", tg.Target, tg.Measured, verdict(tg.Met))
		if !strings.Contains(md, row) {
			t.Errorf("the Markdown has no targets row %q", row)
		}
	}
	// seed-long-user / seed on wasm, from the fake figures: 2307 / 1307 ns.
	if !strings.Contains(md, "1.77× (2.31 µs / 1.31 µs) | **not met** |") {
		t.Errorf("seed-long-user / seed target not rendered from the figures:\n%s", md)
	}
}

// fakeProfile is a profile of one decision (counts for 10 decisions) with
// two steps.
func fakeProfile(name string, calls, mallocs int64) *callProfile {
	return &callProfile{scenario: name, decisions: 10, fns: []*fnStats{
		{name: "opa_eval", calls: 10, step: true, inclusive: 10 * calls, allocs: 10 * mallocs},
		{name: "g0.data.p." + name, calls: 10, step: true, inclusive: 5 * calls, allocs: 5 * mallocs},
		{name: "opa_malloc", calls: 10 * mallocs},
		{name: "opa_value_get", calls: 10*calls - 20 - 10*mallocs},
	}}
}

// TestReportLimits: a target not met says what limits it, with the
// figures of the profiles and the probe, in the Markdown and the JSON
// alike; the profiles' section carries every profiled decision.
func TestReportLimits(t *testing.T) {
	r := fakeReport()
	r.floor.median = 100 * time.Nanosecond // every decision far above the floor
	r.profiles = []*callProfile{fakeProfile("floor", 100, 20), fakeProfile("seed", 600, 70), fakeProfile("seed-long-user", 1300, 200), fakeProfile("vov", 1100, 96)}
	r.probe = &probeResult{shortChars: 4, longChars: 48, probes: []probe{
		{name: userNameProbes[0].name, short: result{median: 2000 * time.Nanosecond}, long: result{median: 6400 * time.Nanosecond}},
		{name: userNameProbes[1].name, short: result{median: 20000 * time.Nanosecond}, long: result{median: 42000 * time.Nanosecond}},
	}}
	md := r.markdown()
	js, err := r.json()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Targets []struct {
			Target, Limit string
			Met           bool
		} `json:"targets"`
		Profiles map[string]struct {
			GuestCalls float64 `json:"guest_calls"`
			Mallocs    float64 `json:"opa_malloc"`
		} `json:"profiles"`
		CharProbe struct {
			Checks []struct {
				PerCharNs int64 `json:"per_char_ns"`
			} `json:"checks"`
		} `json:"char_probe"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.CharProbe.Checks; len(c) != 2 || c[0].PerCharNs != 100 || c[1].PerCharNs != 500 {
		t.Errorf("char_probe.checks = %+v, want per_char_ns (6400-2000)/44 = 100 and (42000-20000)/44 = 500", c)
	}
	limits := map[string]string{}
	for _, tg := range doc.Targets {
		if tg.Met && tg.Limit != "" {
			t.Errorf("%s: met, yet a limit: %s", tg.Target, tg.Limit)
		}
		if tg.Limit != "" {
			limits[tg.Target] = tg.Limit
			if !strings.Contains(md, "- "+tg.Target+": "+tg.Limit+".\n") {
				t.Errorf("the Markdown does not give the limit of %q", tg.Target)
			}
		}
	}
	for _, want := range []struct{ target, text string }{
		{"seed on `wasm` ≤ 2.5× the floor", "the floor makes 100 guest calls (20 `opa_malloc`), the seed decision 600 (70): its own Rego is the other 500 calls, most of them in `data.p.seed` 300"},
		{"VOV on `wasm` ≤ 3× the floor", "the vov decision 1100 (96)"},
		// Beyond the floor's: 528-78 lookups, 70-20 allocations, the
		// policy's one step against the floor's one.
		{"seed on `wasm` ≤ 2.5× the floor", "of the calls beyond the floor's, 450 find keys and compare values (`opa_value_get`, `opa_value_hash`, `opa_value_compare`, `opa_strncmp`, `opa_value_type`), 50 allocate and copy (`opa_malloc`, `memcpy`, growing objects, sets and arrays), 0 build the other values and run builtins, and 0 enter the policy's own rules and functions"},
		// seed on wasm: 1307 ns against a floor of 100, 500 more calls;
		// 2.5× allows 250 ns: 1057 ns over, at 1207/500 ns a call.
		{"seed on `wasm` ≤ 2.5× the floor", "above the floor's 0.10 µs the decision spends 1.21 µs, 2.4 ns for each of its 500 guest calls beyond the floor's: 2.5× the floor allows 0.25 µs, so 1.06 µs less, about 438 fewer guest calls at that rate (or 88% of them)"},
		{"seed-long-user / seed", "0.10 µs a character in this run (2.00 µs for the short name), so the 44 more characters cost 4.40 µs"},
		{"seed-long-user / seed", "`split and a table` 0.50 µs a character (20.00 µs for the short name)"},
	} {
		found := false
		for target, l := range limits {
			if strings.Contains(target, want.target) {
				found = true
				if !strings.Contains(l, want.text) {
					t.Errorf("%s: limit %q does not say %q", want.target, l, want.text)
				}
			}
		}
		if !found {
			t.Errorf("%s: no limit given", want.target)
		}
	}
	for name, p := range doc.Profiles {
		row := fmt.Sprintf("| %s | %.0f | %.0f | ", name, p.GuestCalls, p.Mallocs)
		if !strings.Contains(md, row) {
			t.Errorf("profile %s: the Markdown has no row %s", name, row)
		}
	}
	if len(doc.Profiles) != 4 {
		t.Errorf("JSON has %d profiles, want 4", len(doc.Profiles))
	}
}
