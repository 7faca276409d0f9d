package oracle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

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
	t.Logf("release %s, seed %d (ACLC_ORACLE_SEED=%d replays), %d configurations", r.Name(), seed, seed, n)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	compared, failed := 0, 0
	for i := 0; i < n && failed < 5; i++ {
		c := DrawConfig(rng)
		reqs := DrawRequests(rng, c, 8)
		res := Compare(r, Marshal(c), reqs)
		compared += res.Compared
		for _, d := range res.Diffs {
			if why := known(r, d); why != "" {
				continue
			}
			sc, sr := Shrink(r, c, d.Request, d)
			small := Compare(r, Marshal(sc), reqsOf(sr))
			msg := d.String()
			for _, e := range small.Diffs {
				if e.What == d.What {
					msg = e.String()
				}
			}
			t.Errorf("configuration %d of seed %d (shrunk):\n%s", i, seed, msg)
			failed++
			break
		}
	}
	report(t, "drawn", n, compared, failed)
}

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
