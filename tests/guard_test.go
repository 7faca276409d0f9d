package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestGuardWithEveryPartOffIsYuniKorn pins the guard's off switches on
// every engine: with all of them off, the guard answers every user.info
// case of the corpus where it refuses more than YuniKorn (guard_want) as
// YuniKorn does (want), except requests for a subresource, which YuniKorn
// never sees, and pods YuniKorn marks ignore-application up to 1.9.0: the
// guard never sends that op, which would replace the requester's
// user.info, so there it still answers guard_want.
func TestGuardWithEveryPartOffIsYuniKorn(t *testing.T) {
	files, err := Load("..", "corpus")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sets := map[string]*EngineSet{}
	defer func() {
		for _, s := range sets {
			s.Close(ctx)
		}
	}()
	ran := 0
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Entrypoint != translate.EntrypointAdmissionReview || c.GuardWant == nil || c.Portable || len(c.Versions) > 0 {
				continue
			}
			input, err := c.InputJSON()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(input), `"subResource"`) {
				continue
			}
			key := c.Resolver + "\x00" + mustJSON(c.Namespaces) + "\x00" + Key(c.Inputs)
			set := sets[key]
			if set == nil {
				if set, err = NewGuardOffEngineSet(ctx, c.Inputs, c.Resolver, c.Kubernetes(), false, c.Releases[0], admission.GuardParts()); err != nil {
					t.Fatalf("%s: %v", c.Note, err)
				}
				sets[key] = set
			}
			for _, e := range set.Engines {
				got, err := e.Eval(ctx, translate.EntrypointAdmissionGuard, input)
				if err != nil {
					t.Errorf("%s: %s: %v", c.Note, e.Name(), err)
					continue
				}
				want := c
				if ignoresApplication(c.WantPatch) {
					g := *c
					g.Want, g.WantPatch = c.GuardWant, c.GuardWantPatch
					want = &g
				}
				if problem := want.Check(got); problem != "" {
					t.Errorf("%s: %s: guard with every part off: %s", c.Note, e.Name(), problem)
				}
			}
			ran++
		}
	}
	if ran < 20 {
		t.Fatalf("only %d user.info cases ran", ran)
	}
}

// ignoresApplication reports whether an expected patch holds YuniKorn's
// ignore-application op (an add of the annotations with
// yunikorn.apache.org/ignore-application).
func ignoresApplication(patch any) bool {
	ops, _ := patch.([]any)
	for _, op := range ops {
		m, _ := op.(map[string]any)
		if v, ok := m["value"].(map[string]any); ok && v[admission.IgnoreApplicationAnnotation] != nil {
			return true
		}
	}
	return false
}
