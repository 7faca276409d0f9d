// Package gatekeeper checks aclc's Gatekeeper target with the real
// constraint framework: the ConstraintTemplate and Constraint that
// `aclc build --target gatekeeper` writes are loaded into a framework
// client (the Rego driver Gatekeeper runs) and must refuse exactly what the
// admission policy refuses on the corpus's validation cases. It is its own
// module so the framework's dependency tree stays out of aclc's.
package gatekeeper

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/frameworks/constraint/pkg/apis/templates/v1"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client/drivers/rego"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client/reviews"
	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// repoRoot is the aclc repository this module sits in.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	aclcOnce sync.Once
	aclcPath string
	aclcErr  error
)

// aclc returns the aclc binary: $ACLC when set (make gatekeeper-test builds it),
// else one built from the repository for this run.
func aclc(t testing.TB) string {
	t.Helper()
	aclcOnce.Do(func() {
		if p := os.Getenv("ACLC"); p != "" {
			aclcPath = p
			return
		}
		dir, err := os.MkdirTemp("", "aclc-gatekeeper")
		if err != nil {
			aclcErr = err
			return
		}
		aclcPath = filepath.Join(dir, "aclc")
		cmd := exec.Command("go", "build", "-o", aclcPath, "./cmd/aclc")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			aclcErr = fmt.Errorf("go build ./cmd/aclc: %v\n%s", err, out)
		}
	})
	if aclcErr != nil {
		t.Fatal(aclcErr)
	}
	return aclcPath
}

// manifests is what `aclc build --target gatekeeper` wrote: the user.info
// template and Constraint, and the queue template with its Constraints.
type manifests struct {
	Template   *v1.ConstraintTemplate
	Constraint *unstructured.Unstructured
	Raw        []byte

	QueueTemplate    *v1.ConstraintTemplate
	QueueConstraints []*unstructured.Unstructured
}

// build runs `aclc build --target gatekeeper` on a source, with any other
// flags given, and reads the file it writes.
func build(t testing.TB, source []byte, flags ...string) (*manifests, error) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "yunikorn-configs.yaml")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gatekeeper.yaml")
	// Both templates, whatever the source configures: a case decides
	// with YuniKorn's defaults for what its source leaves out.
	args := append([]string{"build", "--target", "gatekeeper", "--decisions", "user-info,queue", "--output-file", out}, flags...)
	cmd := exec.Command(aclc(t), append(args, src)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("aclc build: %v: %s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{Raw: raw}
	for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var probe struct{ Kind string }
		if err := sigsyaml.Unmarshal(doc, &probe); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		switch probe.Kind {
		case "":
			// A comment only (a template left out, and why).
		case "SyncSet":
		case "ConstraintTemplate":
			ct := &v1.ConstraintTemplate{}
			if err := sigsyaml.UnmarshalStrict(doc, ct); err != nil {
				t.Fatalf("ConstraintTemplate does not decode strictly as templates.gatekeeper.sh/v1: %v", err)
			}
			if ct.Name == "yunikornqueue" {
				m.QueueTemplate = ct
			} else {
				m.Template = ct
			}
		default:
			c := &unstructured.Unstructured{}
			if err := sigsyaml.Unmarshal(doc, &c.Object); err != nil {
				t.Fatalf("document %d: %v", i, err)
			}
			if probe.Kind == "YuniKornQueue" {
				m.QueueConstraints = append(m.QueueConstraints, c)
			} else {
				m.Constraint = c
			}
		}
	}
	if m.Template == nil || m.Constraint == nil {
		t.Fatalf("want a ConstraintTemplate and a Constraint, got:\n%s", raw)
	}
	return m, nil
}

// newClient loads the template and the constraint into a framework client
// with the Rego driver, as Gatekeeper does.
func newClient(t testing.TB, m *manifests) *client.Client {
	t.Helper()
	d, err := rego.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewClient(client.Driver(d), client.Targets(admissionTarget{}), client.EnforcementPoints("validation.gatekeeper.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := m.Template.ToVersionless()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.AddTemplate(ctx, ct); err != nil {
		t.Fatalf("AddTemplate: %v", err)
	}
	if _, err := c.AddConstraint(ctx, m.Constraint); err != nil {
		t.Fatalf("AddConstraint: %v", err)
	}
	return c
}

// violations reviews one AdmissionRequest and returns the messages.
func violations(t testing.TB, c *client.Client, request map[string]any, namespace map[string]any) []string {
	t.Helper()
	var opts []reviews.ReviewOpt
	if namespace != nil {
		opts = append(opts, reviews.Namespace(namespace))
	}
	resp, err := c.Review(context.Background(), request, opts...)
	if err != nil {
		t.Fatalf("Review: %v", err)
	}
	var msgs []string
	for _, r := range resp.Results() {
		msgs = append(msgs, r.Msg)
	}
	sort.Strings(msgs)
	return msgs
}

func TestTemplateIsRegoV1UnderCode(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "examples/admission/configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := build(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if m.Template.APIVersion != "templates.gatekeeper.sh/v1" {
		t.Errorf("apiVersion %q", m.Template.APIVersion)
	}
	if got, want := m.Template.Name, strings.ToLower(m.Template.Spec.CRD.Spec.Names.Kind); got != want {
		t.Errorf("template name %q must be the lower-cased kind %q", got, want)
	}
	if len(m.Template.Spec.Targets) != 1 {
		t.Fatalf("targets: %+v", m.Template.Spec.Targets)
	}
	tg := m.Template.Spec.Targets[0]
	if tg.Target != "admission.k8s.gatekeeper.sh" || tg.Rego != "" || len(tg.Code) != 1 || tg.Code[0].Engine != "Rego" {
		t.Fatalf("want one Rego code block for the admission target and no legacy rego field, got %+v", tg)
	}
	var source struct {
		Version string   `json:"version"`
		Rego    string   `json:"rego"`
		Libs    []string `json:"libs"`
	}
	b, err := json.Marshal(tg.Code[0].Source)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &source); err != nil {
		t.Fatal(err)
	}
	if source.Version != "v1" || !strings.HasPrefix(source.Rego, "package ") || len(source.Libs) == 0 {
		t.Fatalf("want Rego v1 source with libs, got version %q, %d libs", source.Version, len(source.Libs))
	}
	for _, lib := range source.Libs {
		if !strings.HasPrefix(firstCodeLine(lib), "package lib.") {
			t.Errorf("library must be package lib.*, starts %q", firstCodeLine(lib))
		}
	}
	params, _, _ := unstructured.NestedMap(m.Constraint.Object, "spec", "parameters")
	if got := params["externalUsers"]; fmt.Sprint(got) != "[^system:serviceaccount:airflow:airflow-worker$]" {
		t.Errorf("constraint parameters must carry the ConfigMap's settings: externalUsers = %v", got)
	}
	// The framework accepts the template (it compiles the Rego with its rewriter).
	newClient(t, m)
}

func firstCodeLine(src string) string {
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// corpusFile and corpusCase read the parts of the conformance corpus this
// test needs (tests/corpus/admission).
type corpusFile struct {
	Source     string       `yaml:"source"`
	SourceFile string       `yaml:"source_file"`
	Cases      []corpusCase `yaml:"cases"`
}

type corpusCase struct {
	Note       string         `yaml:"note"`
	Source     string         `yaml:"source"`
	SourceFile string         `yaml:"source_file"`
	Input      any            `yaml:"input"`
	Namespaces map[string]any `yaml:"namespaces"`
	Want       map[string]any `yaml:"want"`
	WantError  string         `yaml:"want_error"`
	// GuardWant is the answer of aclc's guard, which the templates decide,
	// where it differs from YuniKorn's.
	GuardWant map[string]any `yaml:"guard_want"`
	// Versions are the releases a case holds for; TestCorpusVersions runs
	// those, the others run at the default release.
	Versions []string `yaml:"versions"`
}

func (c corpusCase) source(root string, f corpusFile) ([]byte, error) {
	switch {
	case c.Source != "":
		return []byte(c.Source), nil
	case c.SourceFile != "":
		return os.ReadFile(filepath.Join(root, c.SourceFile))
	case f.Source != "":
		return []byte(f.Source), nil
	default:
		return os.ReadFile(filepath.Join(root, f.SourceFile))
	}
}

// namespaceObject is the case's replicated namespace, as Gatekeeper
// attaches it to the review; nil for one the case does not replicate.
func (c corpusCase) namespaceObject(name string) map[string]any {
	v, ok := c.Namespaces[name]
	if !ok {
		return nil
	}
	meta := map[string]any{"name": name}
	if m, _ := v.(map[string]any); m != nil && m["annotations"] != nil {
		meta["annotations"] = m["annotations"]
	}
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
}

// unknownNamespace is how the templates complete a denial decided without
// the namespace's annotations: no namespaceObject, nothing synced.
func unknownNamespace(msg, ns string) string {
	if ns == "" {
		ns = "default"
	}
	return msg + " (namespace " + ns + " is not known to Gatekeeper: it was decided without the namespace's annotations; sync Namespaces into data.inventory, as the SyncSet aclc build writes does)"
}

// portableTexts are the denial texts the portable library words differently
// from Go's JSON decoder (it cannot reproduce every syntax-error message).
var portableTexts = map[string]bool{"invalid JSON in the user info annotation": true}

// TestCorpusVerdicts decides every validation case of the admission corpus
// through the framework and compares with the policy's expected answer:
// refused ⇔ a violation, with the policy's denial message.
func TestCorpusVerdicts(t *testing.T) {
	root := repoRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, "tests/corpus/admission/*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no admission corpus: %v", err)
	}
	var compared, denied, approximate int
	skipped := eachValidationCase(t, root, paths, newClient, func(c corpusCase, cl *client.Client, request, resp map[string]any, allowed bool, ns string) {
		nsObject := c.namespaceObject(ns)
		got := violations(t, cl, request, nsObject)
		compared++
		if allowed {
			if len(got) != 0 {
				t.Errorf("%s: the policy allows, the template refuses: %q", c.Note, got)
			}
			return
		}
		denied++
		status, _ := resp["status"].(map[string]any)
		want, _ := status["message"].(string)
		if nsObject == nil && len(got) == 1 {
			plain, ok := strings.CutSuffix(got[0], unknownNamespace("", ns))
			if !ok {
				t.Errorf("%s: a denial decided without the namespace must say so: %q", c.Note, got[0])
			}
			got[0] = plain
		}
		switch {
		case len(got) != 1:
			t.Errorf("%s: the policy refuses (%q), the template gives %d violations %q", c.Note, want, len(got), got)
		case got[0] == want:
		case portableTexts[got[0]]:
			approximate++
			t.Logf("%s: portable text %q for %q", c.Note, got[0], want)
		default:
			t.Errorf("%s: message %q, want %q", c.Note, got[0], want)
		}
	})
	t.Logf("%d validation cases compared (%d refusals, %d with the portable library's approximate text), %d skipped", compared, denied, approximate, skipped)
	if compared < 150 || denied < 50 {
		t.Errorf("too few cases compared (%d, %d refusals): the corpus reader has drifted from the corpus", compared, denied)
	}
}

// eachValidationCase reads the corpus files at paths and calls fn for each
// case the API server could send to Gatekeeper (validationRequest), with a
// client for the case's source (one per distinct source, made by
// newClient from its built manifests), the request, the expected response,
// whether it allows, and the request's namespace ("default" when empty).
// Cases of an invalid source are passed over; it returns how many cases
// were not validation cases.
func eachValidationCase(t *testing.T, root string, paths []string, newClient func(testing.TB, *manifests) *client.Client,
	fn func(c corpusCase, cl *client.Client, request, resp map[string]any, allowed bool, ns string)) (skipped int) {
	t.Helper()
	clients := map[string]*client.Client{}
	return eachCase(t, root, paths, func(c corpusCase, src []byte, request, resp map[string]any, allowed bool, ns string) {
		cl, ok := clients[string(src)]
		if !ok {
			m, err := build(t, src)
			if err != nil {
				t.Fatalf("%s: %v", c.Note, err)
			}
			cl = newClient(t, m)
			clients[string(src)] = cl
		}
		fn(c, cl, request, resp, allowed, ns)
	})
}

// eachCase calls fn for each validation case of the corpus files at paths
// with the case's source, as eachValidationCase does.
func eachCase(t *testing.T, root string, paths []string,
	fn func(c corpusCase, src []byte, request, resp map[string]any, allowed bool, ns string)) (skipped int) {
	t.Helper()
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f corpusFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, c := range f.Cases {
			if c.WantError != "" {
				continue // an invalid source: no manifests to compare
			}
			if len(c.Versions) > 0 {
				continue // decided as its releases (TestCorpusVersions)
			}
			request, reason := validationRequest(c)
			if request == nil {
				skipped++
				t.Logf("%s: not a validation case: %s", c.Note, reason)
				continue
			}
			src, err := c.source(root, f)
			if err != nil {
				t.Fatalf("%s: %v", c.Note, err)
			}
			want := c.Want
			if c.GuardWant != nil {
				want = c.GuardWant
			}
			resp, _ := want["response"].(map[string]any)
			allowed, ok := resp["allowed"].(bool)
			if !ok {
				t.Fatalf("%s: the case's want has no response.allowed", c.Note)
			}
			ns, _ := request["namespace"].(string)
			if ns == "" {
				ns = "default"
			}
			fn(c, src, request, resp, allowed, ns)
		}
	}
	return skipped
}

// validationRequest returns the AdmissionRequest of a case the API server
// could send to Gatekeeper: a well-formed review for CREATE or UPDATE whose
// objects decode as their Kubernetes types. Bodies and objects only a
// broken client could produce are YuniKorn-webhook cases, not Gatekeeper's.
func validationRequest(c corpusCase) (map[string]any, string) {
	in, _ := c.Input.(map[string]any)
	req, _ := in["request"].(map[string]any)
	if req == nil {
		return nil, "no request object"
	}
	if err := decodesAsReview(in); err != nil {
		return nil, err.Error()
	}
	return req, ""
}
