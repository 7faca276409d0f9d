package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestCorpus decides every corpus case on every engine. Each engine must
// meet the case's expectations and agree exactly with the native reference,
// unless the exceptions file names the divergence — and then the divergence
// must still exist, so the list never outlives its reasons.
func TestCorpus(t *testing.T) {
	ctx := context.Background()
	files, err := Load("..", "corpus")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := LoadExceptions("exceptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]*EngineSet{}
	setErrs := map[string]error{}
	defer func() {
		for _, s := range sets {
			s.Close(ctx)
		}
	}()
	total := 0
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			total++
			t.Run(c.Note, func(t *testing.T) {
				if len(c.Versions) == 0 {
					runCorpusCase(ctx, t, c, c.Releases[0], sets, setErrs, ex)
					return
				}
				for _, rel := range c.Releases {
					t.Run(rel.Name(), func(t *testing.T) {
						runCorpusCase(ctx, t, c, rel, sets, setErrs, ex)
					})
				}
			})
		}
	}
	if total < 150 {
		t.Errorf("corpus has %d cases; it should hold at least 150", total)
	}
}

// runCorpusCase decides one case as one YuniKorn release on every engine
// of the set its sources and release share with other cases.
func runCorpusCase(ctx context.Context, t *testing.T, c *Case, rel translate.YuniKornRelease, sets map[string]*EngineSet, setErrs map[string]error, ex Exceptions) {
	key := rel.Name() + "\x00" + fmt.Sprint(c.Portable) + "\x00" + c.Resolver + "\x00" + mustJSON(c.Namespaces) + "\x00" + Key(c.Inputs)
	set, ok := sets[key]
	if !ok && setErrs[key] == nil {
		set, setErrs[key] = NewReleaseEngineSet(ctx, c.Inputs, c.Resolver, c.Kubernetes(), c.Portable, rel)
		if set != nil {
			sets[key] = set
		}
	}
	if c.WantError != "" {
		err := setErrs[key]
		if err == nil {
			t.Fatalf("source loaded; want an error containing %q", c.WantError)
		}
		if !strings.Contains(err.Error(), c.WantError) {
			t.Fatalf("error %q does not contain %q", err, c.WantError)
		}
		if !errors.Is(err, translate.ErrSource) {
			t.Fatalf("error %q is not a source error", err)
		}
		return
	}
	if err := setErrs[key]; err != nil {
		t.Fatalf("source: %v", err)
	}
	input, err := c.InputJSON()
	if err != nil {
		t.Fatal(err)
	}
	var ref []byte
	for _, e := range set.Engines {
		ResetGroups(e) // each engine starts the case from an empty cache
		got, err := e.Eval(ctx, c.Entrypoint, input)
		problem := ""
		switch {
		case err != nil:
			problem = "error: " + err.Error()
		case ref != nil && !SameJSON(ref, got):
			problem = "differs from native: got " + string(got) + ", native " + string(ref)
		default:
			problem = c.Check(got)
		}
		if ref == nil && err == nil {
			ref = got
		}
		why, excepted, inherited := ex.Lookup(e.Name(), c.Note)
		switch {
		case excepted && problem == "" && inherited:
		case excepted && problem == "":
			t.Errorf("%s: passes but is listed in exceptions.yaml (%s): remove the entry", e.Name(), why)
		case excepted:
			t.Logf("%s: known divergence (%s): %s", e.Name(), why, problem)
		case problem != "":
			t.Errorf("%s: %s\ninput: %s", e.Name(), problem, input)
		}
	}
}
