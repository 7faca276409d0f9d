package cel

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests"
)

// engine is this engine's key in tests/exceptions.yaml.
const engine = "cel"

// repoRoot is the aclc repository this module sits in.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// userInfoCases are the corpus cases of the user.info decision as aclc's
// guard decides it (docs/GUARD.md): every review case, run on the guard
// (its note ends in tests.GuardSuffix), expecting guard_want where set.
func userInfoCases(t *testing.T) []*tests.Case {
	root := repoRoot(t)
	files, err := tests.Load(root, filepath.Join(root, "tests", "corpus", "admission"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []*tests.Case
	for _, f := range files {
		for i := range f.Cases {
			if c := &f.Cases[i]; c.Entrypoint == translate.EntrypointAdmissionGuard {
				cases = append(cases, c)
			}
		}
	}
	if len(cases) == 0 {
		t.Fatal("no user.info case in tests/corpus/admission")
	}
	return cases
}

// TestCorpus decides every user.info case of the corpus with the
// generated policies in the API server's admission chain and compares the
// outcome with the guard's expected review: allowed or not, YuniKorn's
// message (after the API server's "ValidatingAdmissionPolicy ... denied
// request: "), and the object the expected JSON Patch makes.
func TestCorpus(t *testing.T) {
	root := repoRoot(t)
	ex, err := tests.LoadExceptions(filepath.Join(root, "tests", "exceptions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	listed := ex[engine]
	cases := userInfoCases(t)
	notes := map[string]bool{}
	clusters := map[string]*cluster{}
	defer func() {
		for _, c := range clusters {
			c.close()
		}
	}()
	for _, c := range cases {
		// An entry names the review case; its guard run inherits it.
		notes[c.Note], notes[strings.TrimSuffix(c.Note, tests.GuardSuffix)] = true, true
		t.Run(c.Note, func(t *testing.T) {
			diff := decide(t, c, clusters)
			why, isListed, _ := ex.Lookup(engine, c.Note)
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
	// The queue decision's cases are listed beside them (TestQueueCorpus).
	for _, c := range queueCases(t) {
		notes[c.Note] = true
	}
	var stale []string
	for note := range listed {
		if !notes[note] {
			stale = append(stale, note)
		}
	}
	sort.Strings(stale)
	for _, note := range stale {
		t.Errorf("exceptions.yaml lists %q for %s, which is not a user.info or queue case of the corpus", note, engine)
	}
}

// decide runs one case and returns how the outcome differs from the
// expected one, "" when it does not.
func decide(t *testing.T, c *tests.Case, clusters map[string]*cluster) string {
	t.Helper()
	docs, src, err := buildFor(c.Inputs, c.Releases)
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
	r, out, why := admitCase(t, c, src, clusters, fmt.Sprint(c.Releases), func() []kruntime.Object { return userInfoOnly(decodeStrict(t, docs)) })
	if out == nil {
		return why
	}
	return compare(c, r, out)
}

// admitCase sends the case's review through a cluster of the policies
// (one cluster per key, the case's inputs and namespaces, reused): the
// request and its outcome, or, with no outcome, why the API server would
// not decide it.
func admitCase(t *testing.T, c *tests.Case, src *translate.Sources, clusters map[string]*cluster, key string, policies func() []kruntime.Object) (*request, *outcome, string) {
	t.Helper()
	raw, err := c.InputJSON()
	if err != nil {
		t.Fatal(err)
	}
	var review struct {
		Request *request `json:"request"`
	}
	if err := json.Unmarshal(raw, &review); err != nil || review.Request == nil {
		return nil, nil, fmt.Sprintf("the API server sends no such review (%v): it never reaches a policy", err)
	}
	r := review.Request
	nss := namespaces(c, src, r)
	key += "\x00" + tests.Key(c.Inputs) + "\x00" + namespaceKey(nss)
	cl, ok := clusters[key]
	if !ok {
		if cl, err = newCluster(policies(), nss); err != nil {
			t.Fatal(err)
		}
		clusters[key] = cl
	}
	out, err := cl.admit(context.Background(), r)
	if err != nil {
		return r, nil, fmt.Sprintf("refused before admission: %v", err)
	}
	return r, out, ""
}

// namespaces are the Namespace objects of a case: the Namespace objects
// among its sources and its replicated namespaces with their annotations,
// and the request's namespace (which exists at the API server) when it
// names another.
func namespaces(c *tests.Case, src *translate.Sources, r *request) []*corev1.Namespace {
	byName := map[string]*corev1.Namespace{}
	listed := map[string]any{}
	if k := src.Kubernetes(); k != nil {
		if nss, ok := k["namespaces"].(map[string]any); ok {
			for name, v := range nss {
				m, _ := v.(map[string]any)
				meta, _ := m["metadata"].(map[string]any)
				listed[name] = meta
			}
		}
	}
	for name, v := range c.Namespaces {
		listed[name] = v
	}
	for name, v := range listed {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if m, ok := v.(map[string]any); ok {
			if a, ok := m["annotations"].(map[string]any); ok {
				ns.Annotations = map[string]string{}
				for k, v := range a {
					ns.Annotations[k] = fmt.Sprint(v)
				}
			}
		}
		byName[name] = ns
	}
	name := r.Namespace
	if name == "" {
		name = "default"
	}
	if _, ok := byName[name]; !ok {
		byName[name] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	var out []*corev1.Namespace
	for _, ns := range byName {
		out = append(out, ns)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func namespaceKey(nss []*corev1.Namespace) string {
	b, _ := json.Marshal(nss)
	return string(b)
}

// compareVerdict checks an outcome's verdict against the case's expected
// response: allowed, and a refusal's message as a validating policy gives
// it. It returns the response (nil when the case expects none, with the
// difference saying so) and the differences.
func compareVerdict(c *tests.Case, out *outcome) (map[string]any, []string) {
	resp, _ := c.Want["response"].(map[string]any)
	if resp == nil {
		return nil, []string{fmt.Sprintf("the case expects no response (%v): the API server always answers", c.Want)}
	}
	var diffs []string
	wantAllowed, _ := resp["allowed"].(bool)
	if out.allowed != wantAllowed {
		diffs = append(diffs, fmt.Sprintf("allowed: got %t (%s), want %t", out.allowed, out.message, wantAllowed))
	}
	wantMsg := ""
	if st, ok := resp["status"].(map[string]any); ok {
		wantMsg, _ = st["message"].(string)
	}
	if !out.allowed && !wantAllowed {
		msg, byPolicy := deniedBy(out.message)
		switch {
		case !byPolicy:
			diffs = append(diffs, fmt.Sprintf("refused, not by a validating policy: %s", out.message))
		case msg != wantMsg:
			diffs = append(diffs, fmt.Sprintf("message: got %q, want %q", msg, wantMsg))
		}
	}
	return resp, diffs
}

// compare checks an outcome against the case's expected response.
func compare(c *tests.Case, r *request, out *outcome) string {
	resp, diffs := compareVerdict(c, out)
	if resp == nil {
		return strings.Join(diffs, "; ")
	}
	wantAllowed, _ := resp["allowed"].(bool)
	if out.allowed && wantAllowed {
		if d := comparePatch(c, r, out); d != "" {
			diffs = append(diffs, d)
		}
	}
	return strings.Join(diffs, "; ")
}

// comparePatch checks that the policies changed the object exactly as the
// expected JSON Patch does (none: not at all).
func comparePatch(c *tests.Case, r *request, out *outcome) string {
	if out.before == nil {
		return ""
	}
	want := out.before
	if c.WantPatch != nil {
		ops, err := json.Marshal(c.WantPatch)
		if err != nil {
			return err.Error()
		}
		p, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			return fmt.Sprintf("want_patch: %v", err)
		}
		// The API server applies a webhook's patch to the object as it
		// serializes it (metadata always present), not to the request's
		// text.
		doc, err := json.Marshal(out.before)
		if err != nil {
			return err.Error()
		}
		patched, err := p.Apply(doc)
		if err != nil {
			return fmt.Sprintf("want_patch does not apply to the object: %v", err)
		}
		gvk := schema.GroupVersionKind{Group: r.Kind.Group, Version: r.Kind.Version, Kind: r.Kind.Kind}
		if want, err = decodeObject(gvk, patched); err != nil {
			return fmt.Sprintf("want_patch makes an object that does not decode: %v", err)
		}
	}
	// The admission chain hands the object on without its kind and
	// apiVersion, which the request carries; the rest must be equal.
	got := out.object.DeepCopyObject()
	want = want.DeepCopyObject()
	got.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if !equality.Semantic.DeepEqual(want, got) {
		return fmt.Sprintf("object: got %s, want %s", mustJSON(got), mustJSON(want))
	}
	return ""
}

func mustJSON(o kruntime.Object) string {
	b, _ := json.Marshal(o)
	return string(b)
}
