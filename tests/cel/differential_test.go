package cel

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests"
)

// The settings the differential test draws requests for.
var differentialSettings = []struct{ name, text string }{
	{"defaults", "admissionController.webHook.amServiceName: yunikorn-admission-controller-service\n"},
	{"external users and groups, filters", `admissionController.accessControl.trustControllers: "false"
admissionController.accessControl.externalUsers: "^frontend$"
admissionController.accessControl.externalGroups: "^admins$,<&>"
admissionController.filtering.processNamespaces: "^team-,^default$"
admissionController.filtering.labelNamespaces: "^team-a$,^default$"
admissionController.filtering.noLabelNamespaces: "^team-b$"
`},
	{"bypassAuth", "admissionController.accessControl.bypassAuth: \"true\"\n"},
}

// The namespaces of the differential cluster: each state of the two
// namespace annotations YuniKorn reads.
var differentialNamespaces = map[string]map[string]string{
	"default": nil, "kube-system": nil, "team-a": nil, "team-b": nil, "other": nil,
	"on":      {"yunikorn.apache.org/namespace.enableYuniKorn": "true"},
	"off":     {"yunikorn.apache.org/namespace.enableYuniKorn": "false"},
	"odd":     {"yunikorn.apache.org/namespace.enableYuniKorn": "yes"},
	"gen-on":  {"yunikorn.apache.org/namespace.generateAppId": "true"},
	"gen-off": {"yunikorn.apache.org/namespace.generateAppId": "false"},
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// drawRequest draws one request: a requester, a kind, an operation, labels
// and a pre-set value among those the rules tell apart.
func drawRequest(r *rand.Rand, i int) *request {
	users := []string{"alice", "", "frontend", "system:serviceaccount:kube-system:replicaset-controller", "system:kube-controller-manager",
		"o'brien \"x\" <y>&", "tab\tand\x01ctl", "sep\u2028\u2029é"}
	groupPool := []string{"devs", "admins", "system:authenticated", "g<&>", "ü", "a,b"}
	var groups []string
	for _, g := range groupPool {
		if r.IntN(3) == 0 {
			groups = append(groups, g)
		}
	}
	user := pick(r, users...)
	kind := pick(r, "Pod", "Pod", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")
	op := "CREATE"
	if kind == "Pod" && r.IntN(4) == 0 {
		op = "UPDATE"
	}
	labels := map[string]string{}
	if r.IntN(4) == 0 {
		labels["app"] = "yunikorn"
	}
	if r.IntN(3) == 0 {
		labels[pick(r, "yunikorn.apache.org/app-id", "applicationId", "spark-app-selector")] = pick(r, "app-1", "")
	}
	values := []string{admission.UserInfoValue(user, groups), `{"user":"root"}`, `[]`, `xyzxyz`, ``, `{"user":1}`, `null`, `{"groups":["a",2]}`, `{}x`, `{"user":"a"`, `{ user: 1}`, `{"x":[[1]]}`}
	annotations := map[string]string{}
	if r.IntN(3) == 0 {
		annotations["team"] = "a"
	}
	if r.IntN(2) == 0 {
		annotations[admission.UserInfoAnnotation] = pick(r, values...)
	}
	meta := map[string]any{"name": "o-" + strconv.Itoa(i)}
	tmplMeta := map[string]any{}
	for m, set := range map[string]bool{"labels": len(labels) > 0, "annotations": len(annotations) > 0} {
		var v any = labels
		if m == "annotations" {
			v = annotations
		}
		if set && kind == "Pod" {
			meta[m] = v
		} else if set {
			tmplMeta[m] = v
		}
	}
	obj := map[string]any{"metadata": meta}
	group, version := "", "v1"
	switch kind {
	case "Pod":
	case "Job":
		group = "batch"
		obj["spec"] = map[string]any{"template": map[string]any{"metadata": tmplMeta}}
	case "CronJob":
		group = "batch"
		obj["spec"] = map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": tmplMeta}}}}
	default:
		group = "apps"
		obj["spec"] = map[string]any{"template": map[string]any{"metadata": tmplMeta}}
	}
	obj["apiVersion"], obj["kind"] = version, kind
	if group != "" {
		obj["apiVersion"] = group + "/" + version
	}
	raw, _ := json.Marshal(obj)
	req := &request{UID: "d-" + strconv.Itoa(i), Kind: metav1.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Namespace: pick(r, "default", "kube-system", "team-a", "team-b", "other", "on", "off", "odd", "gen-on", "gen-off"),
		Name:      meta["name"].(string), Operation: op, Object: raw}
	req.UserInfo.Username, req.UserInfo.Groups = user, groups
	if op == "UPDATE" {
		old := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": meta["name"]}}
		if r.IntN(2) == 0 {
			om := old["metadata"].(map[string]any)
			om["annotations"] = map[string]string{admission.UserInfoAnnotation: pick(r, values...)}
		}
		req.OldObject, _ = json.Marshal(old)
	}
	return req
}

// review is the AdmissionReview the API server would send for a request.
func (r *request) review() []byte {
	req := map[string]any{
		"uid": r.UID, "kind": r.Kind, "namespace": r.Namespace, "name": r.Name, "operation": r.Operation,
		"resource": map[string]string{"group": r.Kind.Group, "version": r.Kind.Version, "resource": ""},
		"userInfo": map[string]any{"username": r.UserInfo.Username, "groups": r.UserInfo.Groups},
		"object":   json.RawMessage(r.Object),
	}
	if len(r.OldObject) > 0 {
		req["oldObject"] = json.RawMessage(r.OldObject)
	}
	out, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	return out
}

// TestAgreesWithTheReferenceOnDrawnRequests draws requests (requesters
// with characters JSON escapes, every workload kind, labels, pre-set
// values valid and not, pod UPDATEs, every namespace annotation state)
// and compares the API server's admission chain running the policies with
// aclc's reference (pkg/acl/admission, YuniKorn's webhook): allowed or
// not, the message, and the object the reference's patch makes. The only
// difference allowed is the one the policies cannot avoid: a requester
// who may not set the annotation pre-setting exactly their own identity.
// ACLC_CEL_SEED replays a run; the seed is new every run.
func TestAgreesWithTheReferenceOnDrawnRequests(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ACLC_CEL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (ACLC_CEL_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var nss []*corev1.Namespace
	refNS := map[string]admission.Namespace{}
	for name, ann := range differentialNamespaces {
		nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}})
		refNS[name] = admission.Namespace{Name: name, Annotations: ann}
	}
	const perSettings = 150
	for _, st := range differentialSettings {
		t.Run(st.name, func(t *testing.T) {
			in := []translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(st.text)}}
			docs, src, err := build(in)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := newCluster(decodeStrict(t, docs), nss)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.close()
			ref := src.Admission()
			owned, refused, patched, compact := 0, 0, 0, 0
			for i := 0; i < perSettings; i++ {
				req := drawRequest(r, i)
				var want struct {
					Response map[string]any `json:"response"`
				}
				if err := json.Unmarshal(ref.Guard(req.review(), refNS), &want); err != nil {
					t.Fatal(err)
				}
				c := &tests.Case{Want: map[string]any{"response": want.Response}}
				if p, ok := want.Response["patch"].(string); ok {
					raw, _ := base64.StdEncoding.DecodeString(p)
					if err := json.Unmarshal(raw, &c.WantPatch); err != nil {
						t.Fatal(err)
					}
				}
				out, err := cl.admit(context.Background(), req)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if want.Response["allowed"] != true {
					refused++
				} else if c.WantPatch != nil {
					patched++
				}
				diff := compare(c, req, out)
				if diff != "" && ownIdentity(req, out, want.Response) {
					owned++
					continue
				}
				if diff != "" && notCompact(out, want.Response) {
					compact++
					continue
				}
				if diff != "" {
					t.Errorf("request %d (%s %s in %s by %q %q): %s\nobject %s", i, req.Operation, req.Kind.Kind, req.Namespace, req.UserInfo.Username, req.UserInfo.Groups, diff, req.Object)
				}
			}
			t.Logf("%d requests: %d refused, %d patched by the reference; %d pre-set own identities admitted, %d valid values not in YuniKorn's form refused (the known differences)", perSettings, refused, patched, owned, compact)
		})
	}
}

// ownIdentity: the policies admitted, the reference refused as not
// allowed, and the pre-set value is the requester's own identity.
func ownIdentity(req *request, out *outcome, want map[string]any) bool {
	if !out.allowed || want["allowed"] == true {
		return false
	}
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"template"`
			JobTemplate struct {
				Spec struct {
					Template struct {
						Metadata struct {
							Annotations map[string]string `json:"annotations"`
						} `json:"metadata"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(req.Object, &obj)
	own := admission.UserInfoValue(req.UserInfo.Username, req.UserInfo.Groups)
	for _, a := range []map[string]string{obj.Metadata.Annotations, obj.Spec.Template.Metadata.Annotations, obj.Spec.JobTemplate.Spec.Template.Metadata.Annotations} {
		if v, ok := a[admission.UserInfoAnnotation]; ok && v == own {
			status, _ := want["status"].(map[string]any)
			msg, _ := status["message"].(string)
			return strings.HasPrefix(msg, fmt.Sprintf("user %s with groups %s is not allowed to set user annotation", req.UserInfo.Username, bracketed(req.UserInfo.Groups)))
		}
	}
	return false
}

// notCompact: the reference admitted a valid pre-set value that the
// policies refuse because it is not in the compact form YuniKorn writes
// (docs/GUARD.md: CEL reads user.info only in that form).
func notCompact(out *outcome, want map[string]any) bool {
	msg, _ := deniedBy(out.message)
	return !out.allowed && want["allowed"] == true && strings.HasPrefix(msg, "yunikorn.apache.org/user.info is not in the form YuniKorn writes it")
}

func bracketed(groups []string) string {
	out := "["
	for i, g := range groups {
		if i > 0 {
			out += ","
		}
		out += g
	}
	return out + "]"
}
