package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/schemas"
)

// Pools for the queue decision at admission: namespaces and their annotations, users
// and user.info values, labels, queues and the scheduler settings it reads.
var (
	admNamespacePool = []string{"default", "team-a", "team-b", "kube-system", "batch", "", "unknown", strings.Repeat("long", 8)}
	admUserPool      = []string{"sue", "bob", "alice", "", "system:serviceaccount:kube-system:deployment-controller", "nobody", "admin"}
	admGroupPool     = []string{"dev", "ops", "admins", "system:authenticated", "system:serviceaccounts"}
	admUserInfoPool  = []string{`{"user":"bob","groups":["dev"]}`, `{"user":"sue"}`, `{"groups":["ops"]}`, "", "null", `{"user":`, `"x"`, `{"USER":"alice"}`, `{"user":"bob","groups":"dev"}`, "{}"}
	admAppIDPool     = []string{"app-1", "x-uniqueautogen", "yunikorn-default-autogen", "", "spark-7"}
	admQueuePool     = []string{"", "root.a", "root.b", "root.default", "root.teams", "a", "root.Sales", "root..x", "root.@recovery@", "root.new", "bad name!", "root.a.b"}
	admParentPool    = []string{"root.teams", "teams", "root.a", "root.nope", "", "root.leaf"}
	admTimePool      = []string{"2026-01-02T03:04:05Z", "1999-12-31T23:59:59+05:30", "2024-02-29T12:00:00.5Z", "1970-01-01T00:00:00Z"}
	admKindPool      = []string{"Pod", "Pod", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ConfigMap"}
	admTagRulePool   = []string{"namespace", "namespace.parentqueue", "imagePullSecrets", "yunikorn.apache.org/task-groups", "yunikorn.apache.org/creationTime",
		"application.create.force", "namespace.resourcequota", "namespace.resourcemaxapps", "namespace.resourceguaranteed"}
)

func randomStringMap(r *rand.Rand, pools map[string][]string) map[string]any {
	out := map[string]any{}
	for k, pool := range pools {
		if r.IntN(2) == 0 {
			out[k] = pick(r, pool)
		}
	}
	return out
}

// randomAdmissionConfig is a yunikorn-configs ConfigMap: a random queue configuration
// (sometimes with tag rules over the shim's tags, sometimes none: the default) and
// random admission settings.
func randomAdmissionConfig(r *rand.Rand) string {
	data := map[string]string{}
	if r.IntN(8) != 0 {
		q := randomPlacementConfig(r)
		if r.IntN(2) == 0 {
			// A tag rule over one of the shim's tags, first.
			tag := fmt.Sprintf("  placementrules:\n  - name: tag\n    value: %s\n    create: %t\n", pick(r, admTagRulePool), r.IntN(2) == 0)
			q = strings.Replace(q, "  placementrules:\n", tag, 1)
			if !strings.Contains(q, "placementrules") {
				q = strings.Replace(q, "- name: default\n", "- name: default\n"+tag, 1)
			}
		}
		data["queues.yaml"] = q
	}
	settings := map[string][]string{
		"admissionController.accessControl.bypassAuth":       {"true", "false"},
		"admissionController.filtering.processNamespaces":    {"^team-", "", "batch"},
		"admissionController.filtering.bypassNamespaces":     {"^kube-system$", "", "^team-b$"},
		"admissionController.filtering.noLabelNamespaces":    {"^batch$", "team"},
		"admissionController.accessControl.systemUsers":      {"^system:serviceaccount:kube-system:", ""},
		"admissionController.filtering.generateUniqueAppId":  {"true", "false"},
		"service.disableGangScheduling":                      {"true", "false"},
		"admissionController.filtering.labelNamespaces":      {"^default$", ""},
		"admissionController.accessControl.externalUsers":    {"^admin$"},
		"admissionController.accessControl.trustControllers": {"false"},
	}
	for k, v := range randomStringMap(r, settings) {
		data[k] = v.(string)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "yunikorn-configs", "namespace": "yunikorn"}, "data": data}
	b, _ := yaml.Marshal(cm)
	return string(b)
}

func randomAdmissionNamespaces(r *rand.Rand) map[string]any {
	out := map[string]any{}
	for _, ns := range admNamespacePool {
		if ns == "" || r.IntN(4) == 0 {
			continue
		}
		out[ns] = map[string]any{"annotations": randomStringMap(r, map[string][]string{
			"yunikorn.apache.org/parentqueue":              admParentPool,
			"yunikorn.apache.org/namespace.enableYuniKorn": {"true", "false", "True"},
			"yunikorn.apache.org/namespace.generateAppId":  {"true", "false"},
			"yunikorn.apache.org/namespace.quota":          {`{"cpu": "1"}`, "{}", "x", `{"cpu": 1}`},
			"yunikorn.apache.org/namespace.max.memory":     {"1G", ""},
			"yunikorn.apache.org/namespace.guaranteed":     {`{"memory": "1G"}`, ""},
			"yunikorn.apache.org/namespace.maxApps":        {"10", "-1", "+3", "x", "-0"},
		})}
	}
	return out
}

// randomPodParts are a pod's (or a pod template's) metadata and spec.
func randomPodParts(r *rand.Rand, withUID bool) (map[string]any, map[string]any) {
	meta := map[string]any{}
	labels := randomStringMap(r, map[string][]string{
		"yunikorn.apache.org/app-id": admAppIDPool, "applicationId": admAppIDPool, "spark-app-selector": admAppIDPool,
		"yunikorn.apache.org/queue": admQueuePool, "queue": admQueuePool, "app": {"yunikorn", "web"},
	})
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	ann := randomStringMap(r, map[string][]string{
		"yunikorn.apache.org/user.info": admUserInfoPool, "yunikorn.apache.org/queue": admQueuePool,
		"yunikorn.apache.org/app-id": admAppIDPool, "yunikorn.apache.org/task-groups": {"tg", ""},
		"yunikorn.apache.org/schedulingPolicyParameters": {"p", ""},
	})
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	if withUID && r.IntN(2) == 0 {
		meta["uid"] = pick(r, []string{"u-1", "9f8e"})
	}
	if r.IntN(3) == 0 {
		meta["creationTimestamp"] = pick(r, admTimePool)
	}
	spec := map[string]any{"containers": []any{map[string]any{"name": "c"}}}
	for k, v := range randomStringMap(r, map[string][]string{"schedulerName": {"yunikorn", "default-scheduler"}, "nodeName": {"node-1", ""}}) {
		spec[k] = v
	}
	if r.IntN(4) == 0 {
		var secrets []any
		for i := r.IntN(3); i > 0; i-- {
			secrets = append(secrets, map[string]any{"name": pick(r, []string{"regcred", "b", ""})})
		}
		spec["imagePullSecrets"] = secrets
	}
	return meta, spec
}

func randomAdmissionReview(r *rand.Rand) map[string]any {
	kind := pick(r, admKindPool)
	op := pick(r, []string{"CREATE", "CREATE", "UPDATE", "DELETE"})
	meta, spec := randomPodParts(r, kind == "Pod")
	var obj map[string]any
	switch kind {
	case "Pod", "ConfigMap":
		obj = map[string]any{"metadata": meta, "spec": spec}
	case "CronJob":
		obj = map[string]any{"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}}}
	default:
		obj = map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}
	}
	user := map[string]any{"username": pick(r, admUserPool)}
	if r.IntN(2) == 0 {
		var gs []any
		for i := r.IntN(3); i > 0; i-- {
			gs = append(gs, pick(r, admGroupPool))
		}
		user["groups"] = gs
	}
	req := map[string]any{"uid": "u", "kind": map[string]any{"group": "", "version": "v1", "kind": kind}, "namespace": pick(r, admNamespacePool),
		"operation": op, "userInfo": user, "object": obj}
	if op == "UPDATE" {
		old := map[string]any{"metadata": meta, "spec": map[string]any{}}
		if r.IntN(2) == 0 {
			old["spec"] = map[string]any{"schedulingGates": []any{map[string]any{"name": "g"}}}
		}
		req["oldObject"] = old
	}
	return map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}
}

// TestPropertyAdmissionQueueEnginesAgree decides random pods and workloads in random
// namespaces under random configurations on every engine and requires each to answer
// as the native reference does.
func TestPropertyAdmissionQueueEnginesAgree(t *testing.T) {
	r, seed := propertyRand(t, 0x71756575)
	ctx := context.Background()
	wantDecisions := propertyDecisions()
	inSchema, err := schemas.Compile("yunikorn/admission_queue/input.json")
	if err != nil {
		t.Fatal(err)
	}
	outSchema, err := schemas.Compile("yunikorn/admission_queue/decision.json")
	if err != nil {
		t.Fatal(err)
	}
	decisions, configs, rejected, denied, warned := 0, 0, 0, 0, 0
	for decisions < wantDecisions {
		src := randomAdmissionConfig(r)
		nss := randomAdmissionNamespaces(r)
		k8s := (&Case{Namespaces: nss}).Kubernetes()
		set, err := NewEngineSet(ctx, Single("random.yaml", []byte(src)), "", k8s)
		if err != nil {
			rejected++ // the validator refuses many random rule lists
			if rejected > 50*wantDecisions {
				t.Fatal("the generator produces only invalid configurations")
			}
			continue
		}
		configs++
		for i := 0; i < 100; i++ {
			in, _ := json.Marshal(randomAdmissionReview(r))
			if err := inSchema.Validate(jsonValue(in)); err != nil {
				t.Fatalf("seed %d: generated input does not follow the input schema: %v\ninput: %s", seed, err, in)
			}
			var ref []byte
			for _, e := range set.Engines {
				got, err := e.Eval(ctx, translate.EntrypointAdmissionQueue, in)
				if err != nil {
					t.Fatalf("seed %d: %s: %v\nconfig:\n%s\nnamespaces: %s\ninput: %s", seed, e.Name(), err, src, mustJSON(nss), in)
				}
				if ref == nil {
					ref = got
					if strings.Contains(string(got), `"allowed":false`) {
						denied++
					}
					if strings.Contains(string(got), `"warnings"`) {
						warned++
					}
					if err := outSchema.Validate(jsonValue(got)); err != nil {
						t.Fatalf("seed %d: the decision does not follow the output schema: %v\ninput: %s\ndecision: %s", seed, err, in, got)
					}
				} else if !SameJSON(ref, got) {
					t.Fatalf("seed %d: %s differs from native\nconfig:\n%s\nnamespaces: %s\ninput: %s\nnative: %s\n%s: %s", seed, e.Name(), src, mustJSON(nss), in, ref, e.Name(), got)
				}
			}
			decisions++
		}
		set.Close(ctx)
	}
	t.Logf("%d decisions (%d denied, %d with warnings) on %d configurations (%d generated configurations rejected at load)", decisions, denied, warned, configs, rejected)
}
