package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The guard property's configuration: YuniKorn's defaults, and one user
// besides the trusted controllers who may set user.info.
const guardPropertySource = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: yunikorn
data:
  admissionController.accessControl.externalUsers: "^carol$"
`

// TestPropertyGuardKeepsTheIdentity draws pods and workloads with every
// combination of the labels, annotations and scheduling gates that bear on
// who a pod runs as, on CREATE and UPDATE, from requesters who may and may
// not choose an identity, and requires of every request the guard admits,
// on every engine, that the identity the scheduler then reads (user.info,
// else the username label on releases that read it, else nobody) is the
// requester's, nobody's, or — on UPDATE — the one the object had: never
// anyone else, unless the requester may choose it.
func TestPropertyGuardKeepsTheIdentity(t *testing.T) {
	r, seed := propertyRand(t, 0x67756172)
	ctx := context.Background()
	type requester struct {
		name      string
		groups    []string
		mayChoose bool
	}
	requesters := []requester{
		{"alice", []string{"devs", "system:authenticated"}, false},
		{"bob", nil, false},
		{"carol", []string{"ops"}, true},
		{"system:serviceaccount:kube-system:replicaset-controller", []string{"system:serviceaccounts"}, true},
	}
	values := []string{"", `{"user":"alice","groups":["devs","system:authenticated"]}`, `{"user":"boss"}`, `{"user":"bob"}`, `{"\"user":"boss"}`, `null`, `{}`, `xyz`}
	names := []string{"alice", "bob", "boss", "carol"}
	kinds := []string{"Pod", "Pod", "Pod", "Deployment", "ReplicationController", "CronJob"}
	rels := []string{release.Default().Name(), release.Snapshot}
	decisions := propertyDecisions() / 6
	for _, relName := range rels {
		rel, err := release.Lookup(relName)
		if err != nil {
			t.Fatal(err)
		}
		set, err := NewReleaseEngineSet(ctx, Single("guard.yaml", []byte(guardPropertySource)), "", nil, false, rel)
		if err != nil {
			t.Fatal(err)
		}
		readsLabel := rel.Has(release.UsernameLabel)
		// meta draws a pod's (or a template's) labels and annotations.
		meta := func() map[string]any {
			labels, annotations := map[string]any{}, map[string]any{}
			if r.IntN(3) == 0 {
				labels["app"] = "yunikorn"
			}
			if r.IntN(2) == 0 {
				labels["yunikorn.apache.org/username"] = names[r.IntN(len(names))]
			}
			if r.IntN(2) == 0 {
				labels["applicationId"] = "app-1"
			}
			if r.IntN(2) == 0 {
				annotations["yunikorn.apache.org/user.info"] = values[r.IntN(len(values))]
			}
			return map[string]any{"labels": labels, "annotations": annotations}
		}
		object := func(kind string, m map[string]any) map[string]any {
			spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}
			if r.IntN(2) == 0 {
				spec["schedulingGates"] = []any{map[string]any{"name": "wait"}}
			}
			if r.IntN(2) == 0 {
				spec["schedulerName"] = "yunikorn"
			}
			tmpl := map[string]any{"metadata": m, "spec": spec}
			switch kind {
			case "Pod":
				m["name"] = "p"
				return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": m, "spec": spec}
			case "CronJob":
				return map[string]any{"apiVersion": "batch/v1", "kind": kind, "metadata": map[string]any{"name": "w"},
					"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": tmpl}}}}
			case "ReplicationController":
				return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": "w"}, "spec": map[string]any{"template": tmpl}}
			}
			return map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": map[string]any{"name": "w"}, "spec": map[string]any{"template": tmpl}}
		}
		// identity is who the scheduler runs the object's pods as, "" for a
		// workload whose pods get their controller's identity.
		identity := func(kind string, obj map[string]any) string {
			m := obj["metadata"].(map[string]any)
			if kind != "Pod" {
				tmpl := obj["spec"].(map[string]any)
				if kind == "CronJob" {
					tmpl = tmpl["jobTemplate"].(map[string]any)["spec"].(map[string]any)
				}
				m, _ = tmpl["template"].(map[string]any)["metadata"].(map[string]any)
			}
			annotations, _ := m["annotations"].(map[string]any)
			labels, _ := m["labels"].(map[string]any)
			if v, _ := annotations["yunikorn.apache.org/user.info"].(string); v != "" {
				var ugi struct {
					User string `json:"user"`
				}
				if json.Unmarshal([]byte(v), &ugi) != nil || ugi.User == "" {
					return "nobody"
				}
				return ugi.User
			}
			if v, _ := labels["yunikorn.apache.org/username"].(string); v != "" && readsLabel {
				return v
			}
			if kind != "Pod" {
				return "" // the controller's
			}
			return "nobody"
		}
		for i := 0; i < decisions; i++ {
			kind := kinds[r.IntN(len(kinds))]
			who := requesters[r.IntN(len(requesters))]
			obj := object(kind, meta())
			request := map[string]any{
				"uid": fmt.Sprintf("u-%d", i), "kind": map[string]any{"group": "", "version": "v1", "kind": kind},
				"namespace": []string{"default", "kube-system", "team-a"}[r.IntN(3)],
				"operation": "CREATE", "userInfo": map[string]any{"username": who.name, "groups": who.groups},
				"object": obj,
			}
			var old map[string]any
			if r.IntN(2) == 0 {
				request["operation"] = "UPDATE"
				old = object(kind, meta())
				request["oldObject"] = old
				if kind == "Pod" && r.IntN(4) == 0 {
					request["subResource"] = "status"
				}
			}
			in, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
			if err != nil {
				t.Fatal(err)
			}
			var ref []byte
			for _, e := range set.Engines {
				got, err := e.Eval(ctx, translate.EntrypointAdmissionGuard, in)
				if err != nil {
					t.Fatalf("seed %d: %s: %v\ninput: %s", seed, e.Name(), err, in)
				}
				if ref == nil {
					ref = got
				} else if !SameJSON(ref, got) {
					t.Fatalf("seed %d: %s differs from native: %s, native %s\ninput: %s", seed, e.Name(), got, ref, in)
				}
			}
			var out struct {
				Response struct {
					Allowed bool   `json:"allowed"`
					Patch   string `json:"patch"`
				} `json:"response"`
			}
			if err := json.Unmarshal(ref, &out); err != nil {
				t.Fatal(err)
			}
			if !out.Response.Allowed || who.mayChoose {
				continue
			}
			admitted := obj
			if out.Response.Patch != "" {
				patch, err := base64.StdEncoding.DecodeString(out.Response.Patch)
				if err != nil {
					t.Fatal(err)
				}
				p, err := jsonpatch.DecodePatch(patch)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(obj)
				if raw, err = p.Apply(raw); err != nil {
					t.Fatalf("seed %d: patch %s does not apply: %v", seed, patch, err)
				}
				admitted = map[string]any{}
				if err := json.Unmarshal(raw, &admitted); err != nil {
					t.Fatal(err)
				}
			}
			got := identity(kind, admitted)
			allowed := map[string]bool{who.name: true, "nobody": true, "": true}
			if old != nil {
				allowed[identity(kind, old)] = true
			}
			if !allowed[got] {
				t.Fatalf("seed %d, release %s: %s admitted for %s runs as %q\ninput: %s\nanswer: %s", seed, relName, kind, who.name, got, in, ref)
			}
		}
		set.Close(ctx)
	}
	t.Logf("%d requests on each of %d releases", decisions, len(rels))
}
