package gatekeeper

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// defaultsSource has no admission keys set but the web hook's service name,
// so every setting is YuniKorn's default.
const defaultsSource = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: yunikorn
data:
  admissionController.webHook.amServiceName: "yunikorn-admission-controller-service"
`

func podCreate(user string, groups []any, annotation string) map[string]any {
	meta := map[string]any{"name": "p", "namespace": "team"}
	if annotation != "" {
		meta["annotations"] = map[string]any{"yunikorn.apache.org/user.info": annotation}
	}
	return map[string]any{
		"uid":       "u1",
		"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
		"namespace": "team",
		"operation": "CREATE",
		"userInfo":  map[string]any{"username": user, "groups": groups},
		"object":    map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta},
	}
}

func deploymentCreate(user, annotation string) map[string]any {
	return map[string]any{
		"uid":       "u2",
		"kind":      map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"},
		"namespace": "team",
		"operation": "CREATE",
		"userInfo":  map[string]any{"username": user},
		"object": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
				"annotations": map[string]any{"yunikorn.apache.org/user.info": annotation},
			}}}},
	}
}

// team is the requests' namespace, without annotations, as Gatekeeper's
// webhook attaches it to every review of a namespaced object.
var team = map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team"}}

func namespace(name, enable string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": name, "annotations": map[string]any{"yunikorn.apache.org/namespace.enableYuniKorn": enable},
	}}
}

func mustBuild(t *testing.T, src string) *manifests {
	t.Helper()
	m, err := build(t, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func setParam(t *testing.T, m *manifests, name string, v any) {
	t.Helper()
	if err := unstructured.SetNestedField(m.Constraint.Object, v, "spec", "parameters", name); err != nil {
		t.Fatal(err)
	}
}

func TestPresetAnnotationNeedsPermission(t *testing.T) {
	c := newClient(t, mustBuild(t, defaultsSource))
	if got := violations(t, c, podCreate("alice", []any{"dev"}, `{"user":"bob"}`), team); len(got) != 1 || got[0] != "user alice with groups [dev] is not allowed to set user annotation" {
		t.Errorf("an ordinary user setting the annotation: got %q", got)
	}
	if got := violations(t, c, podCreate("alice", []any{"dev"}, ""), team); len(got) != 0 {
		t.Errorf("a pod without the annotation is not refused (YuniKorn adds it): got %q", got)
	}
	if got := violations(t, c, podCreate("system:serviceaccount:kube-system:job-controller", nil, `{"user":"bob"}`), team); len(got) != 0 {
		t.Errorf("a trusted controller may set it: got %q", got)
	}
}

// The Constraint's parameters are the settings: changing one changes the
// verdict without rebuilding the template.
func TestConstraintParametersAreTheSettings(t *testing.T) {
	m := mustBuild(t, defaultsSource)
	setParam(t, m, "externalUsers", []any{"^alice$"})
	c := newClient(t, m)
	if got := violations(t, c, podCreate("alice", nil, `{"user":"bob"}`), team); len(got) != 0 {
		t.Errorf("externalUsers ^alice$ lets alice set it: got %q", got)
	}
	if got := violations(t, c, podCreate("alicea", nil, `{"user":"bob"}`), team); len(got) != 1 {
		t.Errorf("the pattern is anchored by the user: alicea must be refused, got %q", got)
	}

	m = mustBuild(t, defaultsSource)
	unstructured.RemoveNestedField(m.Constraint.Object, "spec", "parameters")
	c = newClient(t, m)
	if got := violations(t, c, podCreate("system:serviceaccount:kube-system:job-controller", nil, `{"user":"bob"}`), team); len(got) != 0 {
		t.Errorf("without parameters YuniKorn's defaults apply (kube-system service accounts are trusted): got %q", got)
	}
	if got := violations(t, c, podCreate("alice", nil, `{"user":"bob"}`), team); len(got) != 1 {
		t.Errorf("without parameters an ordinary user is refused: got %q", got)
	}
}

// Workloads meet the namespace filters first: the namespace arrives as the
// review's namespaceObject or from the synced inventory.
//
// The guard's filtered-workloads part, which checks such a workload in
// every namespace, is off here: with it on the namespace would not matter.
func TestNamespaceFromReviewOrInventory(t *testing.T) {
	req := deploymentCreate("alice", `{"user":"bob"}`)
	req["object"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"] = map[string]any{"applicationId": "app-1"}
	m, err := build(t, []byte(defaultsSource), "--guard-off", "filtered-workloads")
	if err != nil {
		t.Fatal(err)
	}

	c := newClient(t, m)
	if got := violations(t, c, req, team); len(got) != 1 {
		t.Fatalf("a processed namespace: the pre-set annotation is refused, got %q", got)
	}
	if got := violations(t, c, req, namespace("team", "false")); len(got) != 0 {
		t.Errorf("namespaceObject enableYuniKorn=false: not processed, got %q", got)
	}

	c = newClient(t, m)
	if _, err := c.AddData(context.Background(), &unstructured.Unstructured{Object: namespace("team", "false")}); err != nil {
		t.Fatal(err)
	}
	if got := violations(t, c, req, nil); len(got) != 0 {
		t.Errorf("inventory enableYuniKorn=false: not processed, got %q", got)
	}
	if got := violations(t, c, req, namespace("team", "true")); len(got) != 1 {
		t.Errorf("the review's namespaceObject wins over the inventory: got %q", got)
	}
}

func TestPodUpdateMayNotChangeTheAnnotation(t *testing.T) {
	c := newClient(t, mustBuild(t, defaultsSource))
	old := podCreate("alice", nil, `{"user":"alice"}`)["object"]
	req := podCreate("system:serviceaccount:kube-system:job-controller", nil, `{"user":"mallory"}`)
	req["operation"] = "UPDATE"
	req["oldObject"] = old
	req["object"].(map[string]any)["metadata"].(map[string]any)["labels"] = map[string]any{"applicationId": "a"}
	if got := violations(t, c, req, team); len(got) != 1 || got[0] != "user info annotation change is not allowed" {
		t.Errorf("changing the value on UPDATE: got %q", got)
	}
	req["object"] = old
	if got := violations(t, c, req, team); len(got) != 0 {
		t.Errorf("an unchanged value: got %q", got)
	}
}

// acceptOwnIdentity lets through what YuniKorn's mutating webhook writes
// (the requester's own identity, byte for byte), nothing else.
func TestAcceptOwnIdentity(t *testing.T) {
	own := `{"user":"alice","groups":["dev","system:authenticated"]}`
	req := podCreate("alice", []any{"dev", "system:authenticated"}, own)

	m := mustBuild(t, defaultsSource)
	if got := violations(t, newClient(t, m), req, team); len(got) != 1 {
		t.Errorf("acceptOwnIdentity false (YuniKorn's rule): own identity is refused too, got %q", got)
	}
	setParam(t, m, "acceptOwnIdentity", true)
	c := newClient(t, m)
	if got := violations(t, c, req, team); len(got) != 0 {
		t.Errorf("acceptOwnIdentity: own identity accepted, got %q", got)
	}
	for _, v := range []string{`{"user":"alice"}`, `{"user":"alice","groups":["admins"]}`, `{"groups":["dev","system:authenticated"],"user":"alice"}`} {
		if got := violations(t, c, podCreate("alice", []any{"dev", "system:authenticated"}, v), team); len(got) != 1 {
			t.Errorf("acceptOwnIdentity: %s is not what YuniKorn writes, must be refused, got %q", v, got)
		}
	}
	dep := deploymentCreate("alice", `{"user":"alice"}`)
	dep["object"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"] = map[string]any{"applicationId": "app-1"}
	if got := violations(t, c, dep, team); len(got) != 0 {
		t.Errorf("acceptOwnIdentity on a workload template: got %q", got)
	}
}

// A source without YuniKorn configuration has nothing to compile: the
// build fails and writes nothing. A queues.yaml alone is YuniKorn with its
// default admission settings, and builds.
func TestBuildNeedsYuniKornConfiguration(t *testing.T) {
	if _, err := build(t, []byte("vov: {owner: cadmin}\nobjects:\n  - {type: set, name: S, owner: joe}\n")); err == nil || !strings.Contains(err.Error(), "no YuniKorn configuration") {
		t.Fatalf("a VOV-only source must not produce a template: %v", err)
	}
	queues, err := os.ReadFile(filepath.Join(repoRoot(t), "examples/yunikorn/sue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := build(t, queues); err != nil {
		t.Fatalf("a queues.yaml builds with the default settings: %v", err)
	}
}

// A review with no namespaceObject and nothing synced (gator verify of an
// AdmissionReview, a Gatekeeper that does not attach the namespace) is
// decided as for a namespace without annotations, and a denial says so and
// what to sync; a synced Namespace is read from data.inventory.
func TestDenialWithoutTheNamespaceSaysWhatToSync(t *testing.T) {
	c := newClient(t, mustBuild(t, defaultsSource))
	req := podCreate("alice", []any{"dev"}, `{"user":"bob"}`)
	const denial = "user alice with groups [dev] is not allowed to set user annotation"
	if got := violations(t, c, req, nil); len(got) != 1 || got[0] != unknownNamespace(denial, "team") {
		t.Errorf("without the namespace: got %q", got)
	}
	synced := &unstructured.Unstructured{Object: namespace("team", "true")}
	if _, err := c.AddData(context.Background(), synced); err != nil {
		t.Fatal(err)
	}
	if got := violations(t, c, req, nil); len(got) != 1 || got[0] != denial {
		t.Errorf("with the Namespace synced: got %q", got)
	}
}
