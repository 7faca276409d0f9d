package oracle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/tests/oracle/core"
)

// rel is the release this build of the oracle runs: the yunikorn-core
// version compiled in, which aclc must know.
func rel(t testing.TB) release.Version {
	t.Helper()
	v, err := release.Lookup(core.Release())
	if err != nil {
		t.Fatalf("yunikorn-core %q in the build: %v", core.Release(), err)
	}
	return v
}

func envInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return def
}

// TestCorpusAgainstYuniKorn puts every corpus case of the queue decision
// and of placement to YuniKorn's core and to aclc, as this release.
func TestCorpusAgainstYuniKorn(t *testing.T) {
	r := rel(t)
	cases, skipped, err := Corpus("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no corpus case read")
	}
	compared, diffs := 0, 0
	for _, c := range cases {
		res := Compare(r, c.Config, []Request{c.Request})
		compared += res.Compared - 1
		for _, d := range res.Diffs {
			if known(r, d) != "" {
				continue
			}
			diffs++
			t.Errorf("%s:\n%s", c.Name, d)
		}
	}
	t.Logf("release %s: %d corpus cases read, %d decisions compared; not put to the core: %v", r.Name(), len(cases), compared, skipped)
	report(t, "corpus", len(cases), compared, diffs)
}

// TestCorpusEnginesAgainstYuniKorn puts the same corpus cases to aclc's
// other engines: the bundles built for each configuration as this
// release, asked on OPA's evaluator, both Wasm engines and aclc serve over
// HTTP. Each engine's verdict, queue and message must be YuniKorn's.
func TestCorpusEnginesAgainstYuniKorn(t *testing.T) {
	r := rel(t)
	cases, _, err := Corpus("../..")
	if err != nil {
		t.Fatal(err)
	}
	// One build per configuration: the cases of one source share it.
	var order []string
	byConfig := map[string][]CorpusCase{}
	for _, c := range cases {
		k := string(c.Config)
		if _, seen := byConfig[k]; !seen {
			order = append(order, k)
		}
		byConfig[k] = append(byConfig[k], c)
	}
	eng := NewEngines(r, nil)
	defer eng.Close()
	cw := openCases(t)
	counts, diffs := map[string]int{}, map[string]int{}
	// The bundles of the next configurations are built while one is
	// decided.
	const ahead = 3
	for j := 0; j < ahead && j < len(order); j++ {
		eng.Prepare([]byte(order[j]))
	}
	for j, k := range order {
		if j+ahead < len(order) {
			eng.Prepare([]byte(order[j+ahead]))
		}
		group := byConfig[k]
		reqs := make([]Request, len(group))
		for i, c := range group {
			reqs[i] = c.Request
		}
		res := CompareOn(r, []byte(k), reqs, eng)
		addCounts(counts, res.EngineCompared)
		cw.write(t, r, []byte(k), res.Decided)
		for _, d := range res.Diffs {
			if d.Engine == "" || known(r, d) != "" {
				continue
			}
			for _, e := range strings.Split(d.Engine, ",") {
				diffs[e]++
			}
			name := group[0].Name
			if d.Request != nil {
				for _, c := range group {
					if c.Request.Action == d.Request.Action && c.Request.Queue == d.Request.Queue && c.Request.User == d.Request.User {
						name = c.Name
						break
					}
				}
			}
			t.Errorf("%s:\n%s", name, d)
		}
	}
	t.Logf("release %s: %d configurations built, decisions compared per engine: %v", r.Name(), len(order), counts)
	for _, e := range eng.Names() {
		report(t, "corpus/"+e, len(order), counts[e], diffs[e])
	}
}

func addCounts(to, from map[string]int) {
	for k, v := range from {
		to[k] += v
	}
}

// TestDrawnAgainstYuniKorn draws configurations and requests
// (ACLC_ORACLE_N configurations, ACLC_ORACLE_SEED to replay) and puts each
// to YuniKorn's core and to aclc; a disagreement is shrunk and printed.
func TestDrawnAgainstYuniKorn(t *testing.T) {
	r := rel(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ACLC_ORACLE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ACLC_ORACLE_SEED=%q: %v", s, err)
		}
		seed = n
	}
	n := envInt("ACLC_ORACLE_N", 200)
	// Every k-th drawn configuration is also built into bundles and asked
	// on aclc's other engines (a Wasm build costs seconds); 0 turns them off.
	every := envInt("ACLC_ORACLE_ENGINES_EVERY", defaultEnginesEvery)
	t.Logf("release %s, seed %d (ACLC_ORACLE_SEED=%d replays), %d configurations, every %d on the engines", r.Name(), seed, seed, n, every)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	eng := NewEngines(r, nil)
	defer eng.Close()
	cw := openCases(t)
	// Drawn first, in the order a replay draws them, so that the bundles
	// of the next configurations for the engines are built while one is
	// decided.
	type drawnCase struct {
		c    yunikorn.SchedulerConfig
		reqs []Request
	}
	drawn := make([]drawnCase, n)
	for i := range drawn {
		c := DrawConfig(rng)
		drawn[i] = drawnCase{c, DrawRequests(rng, c, 8)}
	}
	onEngines := func(i int) bool { return every > 0 && i%every == 0 && i < n }
	const ahead = 3
	for j := 0; j < ahead; j++ {
		if onEngines(j * every) {
			eng.Prepare(Marshal(drawn[j*every].c))
		}
	}
	compared, failed, built := 0, 0, 0
	counts, engineFailed := map[string]int{}, map[string]int{}
	for i := 0; i < n && failed < 5; i++ {
		c, reqs := drawn[i].c, drawn[i].reqs
		var res Result
		if onEngines(i) {
			if next := i + ahead*every; onEngines(next) {
				eng.Prepare(Marshal(drawn[next].c))
			}
			res = CompareOn(r, Marshal(c), reqs, eng)
			built++
			addCounts(counts, res.EngineCompared)
			cw.write(t, r, Marshal(c), res.Decided)
		} else {
			res = Compare(r, Marshal(c), reqs)
		}
		compared += res.Compared
		for _, d := range res.Diffs {
			if why := known(r, d); why != "" {
				continue
			}
			sc, sr := Shrink(r, c, d.Request, d)
			var small Result
			if d.Engine != "" {
				one := NewEngines(r, strings.Split(d.Engine, ","))
				small = CompareOn(r, Marshal(sc), reqsOf(sr), one)
				one.Close()
			} else {
				small = Compare(r, Marshal(sc), reqsOf(sr))
			}
			msg := d.String()
			for _, e := range small.Diffs {
				if e.What == d.What && e.Engine == d.Engine {
					msg = e.String()
				}
			}
			t.Errorf("configuration %d of seed %d (shrunk):\n%s", i, seed, msg)
			failed++
			if d.Engine != "" {
				for _, e := range strings.Split(d.Engine, ",") {
					engineFailed[e]++
				}
			}
			break
		}
	}
	t.Logf("%d configurations on the engines, decisions compared per engine: %v", built, counts)
	report(t, "drawn", n, compared, failed)
	for _, e := range eng.Names() {
		report(t, "drawn/"+e, built, counts[e], engineFailed[e])
	}
}

// defaultEnginesEvery keeps the sample run (200 configurations) and the
// full run (2,000 per release) within minutes on two cores.
const defaultEnginesEvery = 20

func reqsOf(r *Request) []Request {
	if r == nil {
		return nil
	}
	return []Request{*r}
}

// report writes the counts for the generated table when ACLC_ORACLE_REPORT
// names a file.
func report(t *testing.T, kind string, cases, compared, diffs int) {
	path := os.Getenv("ACLC_ORACLE_REPORT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\t%d\t%d\t%d\n", core.Release(), kind, cases, compared, diffs)
}

// known returns why a disagreement is a documented difference, or "".
func known(r release.Version, d Diff) string {
	for _, k := range Known {
		if k.Match(r, d) {
			return k.Reason
		}
	}
	return ""
}
