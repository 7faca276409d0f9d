package gatekeeper

import (
	"context"
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
		deny, warn := queueResults(t, cl, request, c.namespaceObject(ns))
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
		if len(deny) != 1 || deny[0] != want {
			t.Errorf("%s: the policy refuses with %q, the template gives %q", c.Note, want, deny)
		}
	})
	t.Logf("%d validation cases compared (%d refusals, %d warnings), %d skipped", compared, denied, warned, skipped)
	if compared < 80 || denied < 30 {
		t.Errorf("too few cases compared (%d, %d refusals): the corpus reader has drifted from the corpus", compared, denied)
	}
}
