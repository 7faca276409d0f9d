package gatekeeper

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/frameworks/constraint/pkg/client"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client/drivers/rego"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client/reviews"
)

// newQueueClient loads the queue template and its deny and warn
// Constraints into a framework client, as Gatekeeper does.
func newQueueClient(t testing.TB, m *manifests) *client.Client {
	t.Helper()
	if m.QueueTemplate == nil || len(m.QueueConstraints) != 2 {
		t.Fatalf("want the YuniKornQueue template and two Constraints, got:\n%s", m.Raw)
	}
	d, err := rego.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewClient(client.Driver(d), client.Targets(admissionTarget{}), client.EnforcementPoints("validation.gatekeeper.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := m.QueueTemplate.ToVersionless()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.AddTemplate(ctx, ct); err != nil {
		t.Fatalf("AddTemplate: %v", err)
	}
	for _, cons := range m.QueueConstraints {
		if _, err := c.AddConstraint(ctx, cons); err != nil {
			t.Fatalf("AddConstraint: %v", err)
		}
	}
	return c
}

// queueResults reviews one AdmissionRequest and returns the messages of
// the deny Constraint and those of the warn Constraint.
func queueResults(t testing.TB, c *client.Client, request, namespace map[string]any) (deny, warn []string) {
	t.Helper()
	var opts []reviews.ReviewOpt
	if namespace != nil {
		opts = append(opts, reviews.Namespace(namespace))
	}
	resp, err := c.Review(context.Background(), request, opts...)
	if err != nil {
		t.Fatalf("Review: %v", err)
	}
	for _, r := range resp.Results() {
		switch r.EnforcementAction {
		case "deny":
			deny = append(deny, r.Msg)
		case "warn":
			warn = append(warn, r.Msg)
		default:
			t.Fatalf("result with enforcementAction %q", r.EnforcementAction)
		}
	}
	sort.Strings(deny)
	sort.Strings(warn)
	return deny, warn
}

// TestQueueCorpusVerdicts decides every validation case of the queue
// decision's corpus through the framework: refused ⇔ a violation of the
// deny Constraint with the decision's message, and the warn Constraint's
// violations are the decision's warnings.
func TestQueueCorpusVerdicts(t *testing.T) {
	root := repoRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, "tests/corpus/yunikorn/admission-queue-*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no queue corpus: %v", err)
	}
	var compared, denied, warned int
	skipped := eachValidationCase(t, root, paths, newQueueClient, func(c corpusCase, cl *client.Client, request, resp map[string]any, allowed bool, ns string) {
		var wantWarn []string
		if ws, _ := resp["warnings"].([]any); ws != nil {
			for _, w := range ws {
				wantWarn = append(wantWarn, w.(string))
			}
		}
		sort.Strings(wantWarn)
		nsObject := c.namespaceObject(ns)
		deny, warn := queueResults(t, cl, request, nsObject)
		compared++
		if strings.Join(warn, "\n") != strings.Join(wantWarn, "\n") {
			t.Errorf("%s: warnings %q, want %q", c.Note, warn, wantWarn)
		}
		warned += len(warn)
		if allowed {
			if len(deny) != 0 {
				t.Errorf("%s: the policy allows, the template refuses: %q", c.Note, deny)
			}
			return
		}
		denied++
		status, _ := resp["status"].(map[string]any)
		want, _ := status["message"].(string)
		if nsObject == nil {
			want = unknownNamespace(want, ns)
		}
		if len(deny) != 1 || deny[0] != want {
			t.Errorf("%s: the policy refuses with %q, the template gives %q", c.Note, want, deny)
		}
	})
	t.Logf("%d validation cases compared (%d refusals, %d warnings), %d skipped", compared, denied, warned, skipped)
	if compared < 80 || denied < 30 {
		t.Errorf("too few cases compared (%d, %d refusals): the corpus reader has drifted from the corpus", compared, denied)
	}
}

// storedPod is a Pod as Gatekeeper's audit (and gator test) reviews it: the
// stored object, with no operation and no requester.
func storedPod(namespace, queue, userInfo string) map[string]any {
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": namespace, "labels": map[string]any{"queue": queue, "applicationId": "app-1"},
			"annotations": map[string]any{"yunikorn.apache.org/user.info": userInfo}},
		"spec": map[string]any{"schedulerName": "yunikorn"}}
	return map[string]any{
		"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
		"name":      "p",
		"namespace": namespace,
		"operation": "",
		"userInfo":  map[string]any{},
		"object":    pod,
	}
}

// storedDeployment is a Deployment as Gatekeeper's audit reviews it, its
// pod template carrying the user.info YuniKorn wrote at admission.
func storedDeployment(namespace, queue, userInfo string) map[string]any {
	template := storedPod(namespace, queue, userInfo)["object"].(map[string]any)
	delete(template, "apiVersion")
	delete(template, "kind")
	dep := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "namespace": namespace},
		"spec":     map[string]any{"template": template}}
	return map[string]any{
		"kind":      map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"},
		"name":      "d",
		"namespace": namespace,
		"operation": "",
		"userInfo":  map[string]any{},
		"object":    dep,
	}
}

// Audit decides running pods from what the scheduler reads on them: the
// user.info annotation YuniKorn wrote at admission and the queue label. A
// pod the configuration now rejects is a violation of the deny Constraint,
// one it would place elsewhere a violation of the warn Constraint.
func TestAuditReportsRunningPodsTheConfigurationRejects(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "examples/admission/queue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := build(t, src)
	if err != nil {
		t.Fatal(err)
	}
	c := newQueueClient(t, m)
	nsDefault := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "default"}}
	nsTeam := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a",
		"annotations": map[string]any{"yunikorn.apache.org/parentqueue": "root.teams"}}}
	for _, tc := range []struct {
		name             string
		review, ns       map[string]any
		denied, diverted bool
	}{
		{"an admin's pod in root.private stays", storedPod("default", "root.private", `{"user":"ann","groups":["admins"]}`), nsDefault, false, false},
		{"bob's pod in root.private from default is rejected", storedPod("default", "root.private", `{"user":"bob","groups":["dev"]}`), nsDefault, true, false},
		{"bob's pod in root.private from team-a goes to root.teams", storedPod("team-a", "root.private", `{"user":"bob","groups":["dev"]}`), nsTeam, false, true},
		{"a pod without user.info is nobody's", storedPod("default", "root.private", ""), nsDefault, true, false},
		{"bob's Deployment whose pods name root.private from default is rejected", storedDeployment("default", "root.private", `{"user":"bob","groups":["dev"]}`), nsDefault, true, false},
		{"an admin's Deployment stays", storedDeployment("default", "root.private", `{"user":"ann","groups":["admins"]}`), nsDefault, false, false},
	} {
		deny, warn := queueResults(t, c, tc.review, tc.ns)
		if (len(deny) > 0) != tc.denied {
			t.Errorf("%s: deny violations %q", tc.name, deny)
		}
		if tc.denied && len(deny) > 0 && !strings.Contains(deny[0], "would be rejected") {
			t.Errorf("%s: deny message %q", tc.name, deny[0])
		}
		if (len(warn) > 0) != tc.diverted {
			t.Errorf("%s: warn violations %q", tc.name, warn)
		}
	}
}
