package cel

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests"
)

// queueEntrypoint is the decision the queue policies implement.
const queueEntrypoint = "yunikorn/admission/queue"

// queueCases are the corpus cases of the queue decision at admission.
func queueCases(t *testing.T) []*tests.Case {
	root := repoRoot(t)
	files, err := tests.Load(root, filepath.Join(root, "tests", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []*tests.Case
	for _, f := range files {
		for i := range f.Cases {
			if c := &f.Cases[i]; c.Entrypoint == queueEntrypoint {
				cases = append(cases, c)
			}
		}
	}
	if len(cases) == 0 {
		t.Fatal("no case of " + queueEntrypoint + " in tests/corpus")
	}
	return cases
}

// buildQueue writes the kubernetes target of a case's sources as one
// YuniKorn release, with the case's resolver, as the corpus runner loads
// them for every other engine.
func buildQueue(c *tests.Case, rel translate.YuniKornRelease) ([][]byte, *translate.Sources, error) {
	s, err := (&translate.Sources{}).WithYuniKornRelease(rel)
	if err != nil {
		return nil, nil, err
	}
	if err := tests.AddTo(s, c.Inputs); err != nil {
		return nil, nil, err
	}
	if s, err = s.WithKubernetes(c.Kubernetes()).WithGroupResolution(c.Resolver, true); err != nil {
		return nil, nil, err
	}
	objs, err := kubernetes.AllObjects(s)
	if err != nil {
		return nil, nil, err
	}
	docs := make([][]byte, len(objs))
	for i, o := range objs {
		if docs[i], err = o.YAML(); err != nil {
			return nil, nil, err
		}
	}
	return docs, s, nil
}

// queueOnly keeps, of a build's objects, the queue policies and the
// user.info mutation (the annotation the scheduler reads): the user.info
// validating policy is a decision of its own, which the queue cases do not
// expect.
func queueOnly(objs []runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, o := range objs {
		switch p := o.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if p.Name == kubernetes.UserInfoPolicy {
				continue
			}
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			if p.Name == kubernetes.UserInfoPolicy {
				continue
			}
		}
		out = append(out, o)
	}
	return out
}

// userInfoOnly drops the queue policies of a build: the user.info cases
// expect the user.info decision alone.
func userInfoOnly(objs []runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, o := range objs {
		name := o.(interface{ GetName() string }).GetName()
		if name == kubernetes.QueuePolicy || name == kubernetes.QueueWarningsPolicy || name == kubernetes.QueueInForcePolicy {
			continue
		}
		out = append(out, o)
	}
	return out
}

// TestQueueCorpus decides every case of the queue decision at admission
// with the generated queue policies in the API server's admission chain,
// and compares allowed, the denial's message and the warnings with the
// case's expected review. A case with several releases runs once on each.
func TestQueueCorpus(t *testing.T) {
	root := repoRoot(t)
	ex, err := tests.LoadExceptions(filepath.Join(root, "tests", "exceptions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	listed := ex[engine]
	clusters := map[string]*cluster{}
	defer func() {
		for _, c := range clusters {
			c.close()
		}
	}()
	for _, c := range queueCases(t) {
		t.Run(c.Note, func(t *testing.T) {
			var diffs []string
			for _, rel := range c.Releases {
				if d := decideQueue(t, c, rel, clusters); d != "" {
					if len(c.Releases) > 1 {
						d = rel.Name() + ": " + d
					}
					diffs = append(diffs, d)
				}
			}
			diff := strings.Join(diffs, "; ")
			why, isListed := listed[c.Note]
			switch {
			case diff != "" && !isListed:
				t.Errorf("%s", diff)
			case diff == "" && isListed:
				t.Errorf("passes but is listed in exceptions.yaml (%s): remove the entry", why)
			case diff != "":
				t.Logf("known divergence (%s): %s", why, diff)
			}
		})
	}
}

// decideQueue runs one case as one release and returns how the outcome
// differs from the expected one, "" when it does not.
func decideQueue(t *testing.T, c *tests.Case, rel translate.YuniKornRelease, clusters map[string]*cluster) string {
	t.Helper()
	docs, src, err := buildQueue(c, rel)
	if c.WantError != "" {
		if err == nil {
			return fmt.Sprintf("build succeeds, want an error containing %q", c.WantError)
		}
		if !strings.Contains(err.Error(), c.WantError) {
			return fmt.Sprintf("build error %q, want it to contain %q", err, c.WantError)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("build: %v", err)
	}
	if !slices.ContainsFunc(docs, func(d []byte) bool { return strings.Contains(string(d), "name: "+kubernetes.QueuePolicy+"\n") }) {
		return "no queue policy: " + strings.Join(kubernetes.Limits(src), "; ")
	}
	_, out, why := admitCase(t, c, src, clusters, rel.Name()+"\x00"+c.Resolver, func() []runtime.Object { return queueOnly(decodeStrict(t, docs)) })
	if out == nil {
		return why
	}
	return compareQueue(c, out)
}

// warnedBy strips the API server's framing of a Warn binding's warning.
func warnedBy(w string) string {
	prefix := "Validation failed for ValidatingAdmissionPolicy '" + kubernetes.QueueWarningsPolicy + "' with binding '" + kubernetes.QueueWarningsPolicy + "': "
	return strings.TrimPrefix(w, prefix)
}

// compareQueue checks allowed, the message and the warnings.
func compareQueue(c *tests.Case, out *outcome) string {
	resp, diffs := compareVerdict(c, out)
	if resp == nil {
		return strings.Join(diffs, "; ")
	}
	wantAllowed, _ := resp["allowed"].(bool)
	var want []string
	if ws, ok := resp["warnings"].([]any); ok {
		for _, w := range ws {
			want = append(want, fmt.Sprint(w))
		}
	}
	var got []string
	for _, w := range out.warnings {
		got = append(got, warnedBy(w))
	}
	if out.allowed && wantAllowed && !slices.Equal(got, want) {
		diffs = append(diffs, fmt.Sprintf("warnings: got %q, want %q", got, want))
	}
	for i, d := range diffs {
		if len(d) > 600 {
			diffs[i] = d[:600] + "…"
		}
	}
	return strings.Join(diffs, "; ")
}
