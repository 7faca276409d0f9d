package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// Pools for the user.info review: the admission settings as YuniKorn reads them from
// yunikorn-configs (bools through ParseBool, some refused; pattern lists, some with an
// item that does not compile, which reverts the key to its default), requesters,
// user.info values and the strings Go's encoder escapes.
var (
	reviewBoolPool    = []string{"true", "false", "1", "0", "t", "F", "TRUE", "False", "yes", " true", ""}
	reviewPatternPool = []string{
		"", "^kube-system$", "^kube-system$,^kube-public$", "^team-", "team", "batch", "^default$", ".*", "^$",
		"^system:serviceaccount:kube-system:", "^system:serviceaccount:kube-system:,^system:kube-controller-manager$",
		"^admin$", "admin", "(?i)^ALICE$", "^a$|^b$", "a{1,3}", "[invalid", "^system:serviceaccount:airflow:airflow-worker$",
		"^yunikorn-submitters$", "dev", "^devs$, ^ops$", " , ", "system:", "é", "<", "^$,x",
	}
	reviewSettingKeys = []string{
		"admissionController.accessControl.bypassAuth", "admissionController.accessControl.trustControllers",
		"admissionController.accessControl.systemUsers", "admissionController.accessControl.externalUsers",
		"admissionController.accessControl.externalGroups", "admissionController.filtering.processNamespaces",
		"admissionController.filtering.bypassNamespaces", "admissionController.filtering.labelNamespaces",
		"admissionController.filtering.noLabelNamespaces",
	}
	reviewUserPool = []string{
		"alice", "bob", "admin", "sysadmin-bob", "", "ALICE", "a", "b", "system:kube-controller-manager",
		"system:serviceaccount:kube-system:replicaset-controller", "system:serviceaccount:kube-system:deployment-controller",
		"system:serviceaccount:kube-system:cronjob-controller", "system:serviceaccount:airflow:airflow-worker",
		"system:serviceaccount:team-a:default", `o'brien "x" <y>&`, "a\u2028b\u2029", "用户", "a\\b", "a\x00b", "\t",
	}
	reviewTrustedPool = []string{
		"system:serviceaccount:kube-system:replicaset-controller", "system:serviceaccount:kube-system:job-controller",
		"system:serviceaccount:airflow:airflow-worker", "admin", "alice",
	}
	reviewGroupPool = []string{
		"devs", "ops", "dev", "nodevs-team", "yunikorn-submitters", "system:authenticated", "system:serviceaccounts",
		"system:serviceaccounts:kube-system", "", "<&>", "g/1", "é", "a,b",
	}
	reviewUserInfoPool = []string{
		`{"user":"bob","groups":["dev"]}`, `{"user":"alice","groups":["devs","system:authenticated"]}`, `{"user":"sue"}`,
		`{"groups":["ops"]}`, "{}", "null", "", " ", `{"USER":"x"}`, `{"username":"joe"}`, " {\"user\" : \"a\"}\n",
		`{"user":"a","groups":null}`, "[]", `"str"`, `{"user":1}`, `{"user":"joe","groups":"g"}`, `{"user":"a","groups":[1]}`,
		`{"user":"a"}x`, "xyzxyz", `{"user":`, "true", "false", "1", "1e700", `{"us\u0065r":1}`, `{"uſer":1}`,
		`{"user":"a","user":"b"}`, `{"user":"\ud800"}`, `"\ud800"`, `{"user":"a",}`, `[1 2]`, `{1:2}`, `{"a":[1}`, "01",
		`{"user":"o'brien \"x\" \u003cy\u003e\u0026"}`, `{"x":{"user":1},"y":[1,2.5e10,-0,true,null,{"a":[]}]}`,
		`{"groups":[null,"a"]}`, `{"groups":[{}]}`, `{"user":null}`, `{"user":{}}`, `{"GROUPS":true}`,
	}
	reviewNamespacePool = []string{"default", "team-a", "team-b", "kube-system", "kube-public", "batch", "batch-legacy", "", "unknown", "admin"}
	reviewKindPool      = []string{"Pod", "Pod", "Pod", "Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ReplicaSet", "Job", "CronJob", "ConfigMap", "pod", ""}
	reviewOpPool        = []string{"CREATE", "CREATE", "CREATE", "UPDATE", "UPDATE", "DELETE", "CONNECT", "", "create"}
	reviewEscapes       = []string{"<", ">", "&", "\u2028", "\u2029", `"`, `\`, "\n", "\x00", "é", "😀", "\xff", "a"}
	reviewBadValues     = []any{nil, 1, 1.5, true, "s", "", []any{}, []any{"a"}, []any{1}, map[string]any{}, map[string]any{"a": "b"}}
)

// randomReviewSettings is a yunikorn-configs ConfigMap setting a random subset of the
// admission keys, each to a value YuniKorn accepts or falls back from.
func randomReviewSettings(r *rand.Rand) string {
	data := map[string]string{"admissionController.webHook.amServiceName": "yunikorn-admission-controller-service"}
	for _, k := range reviewSettingKeys {
		if r.IntN(2) == 0 {
			continue
		}
		if strings.HasSuffix(k, "bypassAuth") || strings.HasSuffix(k, "trustControllers") {
			data[k] = pick(r, reviewBoolPool)
			continue
		}
		var items []string
		for n := r.IntN(3); n >= 0; n-- {
			items = append(items, pick(r, reviewPatternPool))
		}
		data[k] = strings.Join(items, ",")
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "yunikorn-configs", "namespace": "yunikorn"}, "data": data}
	b, _ := yaml.Marshal(cm)
	return string(b)
}

// randomEscapingString is a string of characters Go's encoder escapes (or not), now
// and then long.
func randomEscapingString(r *rand.Rand) string {
	n := r.IntN(12)
	if r.IntN(40) == 0 {
		n = 1000 + r.IntN(4000)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(pick(r, reviewEscapes))
	}
	return b.String()
}

// randomReviewMeta is the metadata of a pod or a pod template: labels (app=yunikorn,
// the app-id labels, empty or not), annotations with or without user.info, either
// map absent, null or of the wrong type now and then.
func randomReviewMeta(r *rand.Rand) any {
	if r.IntN(30) == 0 {
		return pick(r, reviewBadValues)
	}
	meta := map[string]any{"name": "p"}
	labels := randomStringMap(r, map[string][]string{
		"app": {"yunikorn", "web", ""}, "yunikorn.apache.org/app-id": admAppIDPool, "applicationId": admAppIDPool,
		"spark-app-selector": admAppIDPool, "queue": {"root.a"},
	})
	switch r.IntN(12) {
	case 0:
	case 1:
		meta["labels"] = nil
	case 2:
		meta["labels"] = pick(r, reviewBadValues)
	default:
		meta["labels"] = labels
	}
	ann := map[string]any{}
	if r.IntN(2) == 0 {
		if r.IntN(3) == 0 {
			ann["yunikorn.apache.org/user.info"] = randomUserInfoValue(r)
		} else {
			ann["yunikorn.apache.org/user.info"] = pick(r, reviewUserInfoPool)
		}
	}
	if r.IntN(3) == 0 {
		ann["team"] = pick(r, []string{"a", "analytics", ""})
	}
	if r.IntN(4) == 0 {
		ann[randomEscapingString(r)] = randomEscapingString(r)
	}
	if r.IntN(20) == 0 {
		ann["yunikorn.apache.org/user.info"] = pick(r, reviewBadValues) // the wrong type
	}
	switch r.IntN(12) {
	case 0:
	case 1:
		meta["annotations"] = nil
	case 2:
		meta["annotations"] = pick(r, reviewBadValues)
	default:
		meta["annotations"] = ann
	}
	return meta
}

// randomUserInfoValue is a user.info value built like the controller's own, with
// requesters and groups from the pools, sometimes bent.
func randomUserInfoValue(r *rand.Rand) string {
	v := map[string]any{}
	if r.IntN(3) != 0 {
		v[pick(r, []string{"user", "User", "USER", "username"})] = pick(r, reviewUserPool)
	}
	if r.IntN(2) == 0 {
		gs := []any{}
		for n := r.IntN(3); n > 0; n-- {
			gs = append(gs, pick(r, reviewGroupPool))
		}
		v["groups"] = gs
	}
	if r.IntN(10) == 0 {
		v[pick(r, []string{"user", "groups"})] = pick(r, reviewBadValues)
	}
	b, _ := json.Marshal(v)
	s := string(b)
	switch r.IntN(15) {
	case 0:
		s = " " + s + "\n"
	case 1:
		s += pick(r, []string{"x", "}", ",", " 1"})
	case 2:
		s = s[:r.IntN(len(s))]
	}
	return s
}

// randomReviewObject is an object of the kind, its pod template (or the pod's own
// metadata) from randomReviewMeta, with a level of the template's path of the wrong
// type or missing now and then.
func randomReviewObject(r *rand.Rand, kind string) any {
	meta := randomReviewMeta(r)
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "alpine"}}}
	var obj map[string]any
	switch kind {
	case "Pod", "ConfigMap", "pod", "":
		obj = map[string]any{"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": spec}
	case "CronJob":
		obj = map[string]any{"apiVersion": "batch/v1", "kind": kind, "metadata": map[string]any{"name": "cj"},
			"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}}}
	default:
		obj = map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}
	}
	switch r.IntN(25) {
	case 0:
		return pick(r, reviewBadValues)
	case 1:
		obj["spec"] = pick(r, reviewBadValues)
	case 2:
		if s, ok := obj["spec"].(map[string]any); ok {
			if _, ok := s["template"]; ok {
				s["template"] = pick(r, reviewBadValues)
			} else if _, ok := s["jobTemplate"]; ok {
				s["jobTemplate"] = pick(r, reviewBadValues)
			} else {
				s["containers"] = pick(r, reviewBadValues)
			}
		}
	case 3:
		obj["metadata"] = pick(r, reviewBadValues)
	case 4:
		delete(obj, "spec")
	}
	return obj
}

// randomUserInfoReview is an AdmissionReview for the user.info decision: Pods and
// every workload kind, CREATE, UPDATE and other operations, requesters trusted or not,
// and, now and then, a request whose fields have the wrong type, are missing, or no
// request at all.
func randomUserInfoReview(r *rand.Rand) []byte {
	kind := pick(r, reviewKindPool)
	op := pick(r, reviewOpPool)
	userInfo := map[string]any{}
	switch r.IntN(6) {
	case 0:
		userInfo["username"] = pick(r, diffUserPool)
	case 1:
		userInfo["username"] = randomEscapingString(r)
	case 2, 3:
		// Requesters the settings often allow to set the annotation, so that its
		// value is checked.
		userInfo["username"] = pick(r, reviewTrustedPool)
	default:
		userInfo["username"] = pick(r, reviewUserPool)
	}
	switch r.IntN(6) {
	case 0:
	case 1:
		userInfo["groups"] = nil
	default:
		gs := []any{}
		for n := r.IntN(4); n > 0; n-- {
			gs = append(gs, pick(r, reviewGroupPool))
		}
		userInfo["groups"] = gs
	}
	if r.IntN(3) == 0 {
		userInfo["uid"] = "f8d4a1e2"
	}
	req := map[string]any{
		"uid":       pick(r, []string{"u-1", "0df28fbd-5f5f-11e8-b7cc-42010a800002", ""}),
		"kind":      map[string]any{"group": "", "version": "v1", "kind": kind},
		"namespace": pick(r, reviewNamespacePool),
		"operation": op,
		"userInfo":  userInfo,
		"object":    randomReviewObject(r, kind),
	}
	if op == "UPDATE" || r.IntN(10) == 0 {
		switch r.IntN(8) {
		case 0:
			// no oldObject
		case 1:
			req["oldObject"] = pick(r, reviewBadValues)
		case 2, 3:
			req["oldObject"] = req["object"] // unchanged
		default:
			req["oldObject"] = randomReviewObject(r, kind)
		}
	}
	if r.IntN(3) == 0 {
		req["dryRun"] = false
		req["name"] = "p"
	}
	switch r.IntN(40) {
	case 0, 1:
		// A field of the wrong type, or several: the first check that fails names it.
		for n := 1 + r.IntN(2); n > 0; n-- {
			req[pick(r, []string{"uid", "namespace", "operation", "kind", "userInfo"})] = pick(r, reviewBadValues)
		}
	case 2:
		delete(req, pick(r, []string{"uid", "namespace", "operation", "kind", "userInfo", "object"}))
	case 3:
		userInfo[pick(r, []string{"username", "groups"})] = pick(r, reviewBadValues)
	case 4:
		userInfo["groups"] = []any{"devs", pick(r, reviewBadValues)}
	case 5:
		req["kind"] = map[string]any{"kind": pick(r, reviewBadValues)}
	}
	review := map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}
	switch r.IntN(80) {
	case 0:
		review["request"] = pick(r, reviewBadValues)
	case 1:
		delete(review, "request")
	case 2:
		return []byte(pick(r, []string{"null", "[]", `"x"`, "1", "true", "{}"}))
	}
	b, err := json.Marshal(review)
	if err != nil {
		panic(err)
	}
	return b
}

// TestDifferentialAdmissionReview decides random AdmissionReviews (and malformed ones)
// under random admission settings and namespace annotations with the reference policy
// and the current one, both with aclc's decoding builtins and portable, and requires
// the same answer, byte for byte. 50,000 inputs, 100,000 with -long.
func TestDifferentialAdmissionReview(t *testing.T) {
	r, seed := propertyRand(t, 0x64696672)
	ctx := context.Background()
	want := differentialInputs(50000)
	start := time.Now()
	pairs := map[bool]policyPair{}
	decisions, configs := 0, 0
	for decisions < want {
		src := randomReviewSettings(r)
		nss := randomAdmissionNamespaces(r)
		portable := r.IntN(2) == 0
		s := &translate.Sources{}
		if err := AddTo(s, Single("random.yaml", []byte(src))); err != nil || s.Admission() == nil {
			t.Fatalf("seed %d: settings refused (%v)\n%s", seed, err, src)
		}
		s, err := s.WithKubernetes((&Case{Namespaces: nss}).Kubernetes()).WithGroupResolution("", true)
		if err != nil {
			t.Fatal(err)
		}
		if portable {
			s = s.WithPlainDecoding()
		}
		pair, ok := pairs[portable]
		if !ok {
			pair = compilePolicyPair(ctx, t, s)
			pairs[portable] = pair
		}
		data := s.Data()
		exact := r.IntN(4) != 0
		if !exact {
			// Settings without the sets of exact names, as Gatekeeper's parameters
			// give them: every list is matched as patterns.
			delete(data["aclc"].(map[string]any)["admission"].(map[string]any), "exact")
		}
		d := pair.load(ctx, t, data)
		configs++
		for i := 0; i < 200 && decisions < want; i++ {
			in := randomUserInfoReview(r)
			d.same(ctx, t, translate.EntrypointAdmissionReview, in, func() string {
				return fmt.Sprintf("seed %d, portable %t, exact names %t\nconfig:\n%s\nnamespaces: %s", seed, portable, exact, src, mustJSON(nss))
			})
			decisions++
		}
		d.close(ctx)
	}
	t.Logf("%d decisions on %d configurations in %s", decisions, configs, time.Since(start).Round(time.Millisecond))
}
