package admission

import (
	"encoding/json"
	"maps"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Requesters seen in the spec's examples and controller chains.
const (
	deploymentController = "system:serviceaccount:kube-system:deployment-controller"
	replicaSetController = "system:serviceaccount:kube-system:replicaset-controller"
	cronJobController    = "system:serviceaccount:kube-system:cronjob-controller"
)

// controllerGroups are the groups of a kube-system service account.
var controllerGroups = []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}

// request describes an AdmissionRequest; zero fields get defaults.
type request struct {
	uid       string // "uid-1" when empty
	op        string // CREATE when empty
	kind      string
	namespace string
	user      string
	groups    []string
	object    []byte // nil: absent
	oldObject []byte // nil: absent
}

// body marshals the request as the API server sends it.
func (r request) body(t testing.TB) []byte {
	t.Helper()
	uid, op := r.uid, r.op
	if uid == "" {
		uid = "uid-1"
	}
	if op == "" {
		op = "CREATE"
	}
	group, version := "", "v1"
	switch r.kind {
	case kindDeployment, kindReplicaSet, kindStatefulSet, kindDaemonSet:
		group = "apps"
	case kindJob, kindCronJob:
		group = "batch"
	}
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{Kind: "AdmissionReview", APIVersion: "admission.k8s.io/v1"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID(uid),
			Kind:      metav1.GroupVersionKind{Group: group, Version: version, Kind: r.kind},
			Namespace: r.namespace,
			Operation: admissionv1.Operation(op),
			UserInfo:  authenticationv1.UserInfo{Username: r.user, Groups: r.groups},
			Object:    runtime.RawExtension{Raw: r.object},
			OldObject: runtime.RawExtension{Raw: r.oldObject},
		},
	}
	b, err := json.Marshal(ar)
	if err != nil {
		t.Fatalf("marshal review: %v", err)
	}
	return b
}

// decodeResponse decodes Review's answer with the API types, and checks
// the invariants of spec §6 that hold for every answer.
func decodeResponse(t testing.TB, out []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(out, &ar); err != nil {
		t.Fatalf("answer does not decode: %v\n%s", err, out)
	}
	if ar.Kind != "AdmissionReview" || ar.APIVersion != "admission.k8s.io/v1" || ar.Request != nil || ar.Response == nil {
		t.Fatalf("answer is not an AdmissionReview with only a response: %s", out)
	}
	r := ar.Response
	if r.Allowed && r.Result != nil {
		t.Errorf("an allow carries a message: %s", out)
	}
	if !r.Allowed && (r.Patch != nil || r.PatchType != nil) {
		t.Errorf("a denial carries a patch: %s", out)
	}
	if !r.Allowed && r.Result == nil && r.UID != "" {
		t.Errorf("a denial without a message: %s", out)
	}
	if (len(r.Patch) != 0) != (r.PatchType != nil) || (r.PatchType != nil && *r.PatchType != admissionv1.PatchTypeJSONPatch) {
		t.Errorf("patch and patchType disagree: %s", out)
	}
	if r.Result != nil && (r.Result.Message == "" || r.Result.Code != 0 || r.Result.Status != "" || r.Result.Reason != "") {
		t.Errorf("status is not just a message: %s", out)
	}
	return r
}

// applyPatch applies a JSON patch to the object as the API server does.
func applyPatch(t testing.TB, object, patch []byte) []byte {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("patch does not decode: %v\n%s", err, patch)
	}
	out, err := p.Apply(object)
	if err != nil {
		t.Fatalf("patch does not apply: %v\npatch  %s\nobject %s", err, patch, object)
	}
	return out
}

// templateAnnotations reads the annotations that user.info lives in: the
// pod's own, or the pod template's of a workload.
func templateAnnotations(t testing.TB, kind string, object []byte) map[string]string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(object, &doc); err != nil {
		t.Fatalf("object does not decode: %v", err)
	}
	path := []string{"spec", "template", "metadata", "annotations"}
	switch kind {
	case kindPod:
		path = []string{"metadata", "annotations"}
	case kindCronJob:
		path = []string{"spec", "jobTemplate", "spec", "template", "metadata", "annotations"}
	}
	var cur any = doc
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	m, _ := cur.(map[string]any)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out
}

// obj marshals a test object.
func obj(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pod is a Pod manifest with the given annotations and labels (nil maps
// are left out).
func pod(annotations, labels map[string]string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   meta("p", annotations, labels),
		"spec":       podSpec(),
	}
}

func meta(name string, annotations, labels map[string]string) map[string]any {
	m := map[string]any{}
	if name != "" {
		m["name"] = name
	}
	if annotations != nil {
		m["annotations"] = maps.Clone(annotations)
	}
	if labels != nil {
		m["labels"] = maps.Clone(labels)
	}
	return m
}

func podSpec() map[string]any {
	return map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}
}

// workload is a manifest of kind whose pod template has the given
// annotations and labels.
func workload(kind string, annotations, labels map[string]string) map[string]any {
	tmpl := map[string]any{"metadata": meta("", annotations, labels), "spec": podSpec()}
	apiVersion := "apps/v1"
	spec := map[string]any{"template": tmpl}
	switch kind {
	case kindJob:
		apiVersion = "batch/v1"
	case kindCronJob:
		apiVersion = "batch/v1"
		spec = map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": tmpl}}}
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta("w", nil, nil), "spec": spec}
}
