package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

const userInfoKey = "yunikorn.apache.org/user.info"

// TestEndToEnd runs the real server (TLS, self-signed CA verified by the
// client) over the real Wasm engine compiled from admission settings, and
// applies the returned patch as the API server would.
func TestEndToEnd(t *testing.T) {
	r := startTLS(t, wasmEngine(t), NewConfig().WithLogger(discard))

	t.Run("a pod created by alice gets her user.info", func(t *testing.T) {
		pod := samplePod(map[string]string{"team": "a"})
		body := review(t, "e2e-1", "alice", []string{"devs"}, pod)
		resp, b := r.post(t, "/mutate", body)
		got := decodeReview(t, resp, b)
		if got.UID != "e2e-1" || !got.Allowed || got.Result != nil {
			t.Fatalf("response %+v, want uid e2e-1, allowed, no status", got)
		}
		if got.PatchType == nil || *got.PatchType != admissionv1.PatchTypeJSONPatch {
			t.Fatalf("patchType %v, want JSONPatch", got.PatchType)
		}
		patched := applyPatch(t, pod, got.Patch)
		if v := patched.Annotations[userInfoKey]; v != `{"user":"alice","groups":["devs"]}` {
			t.Errorf("user.info = %q, want {\"user\":\"alice\",\"groups\":[\"devs\"]}", v)
		}
		if patched.Annotations["team"] != "a" {
			t.Errorf("existing annotation lost: %v", patched.Annotations)
		}
	})

	t.Run("the validating path answers the decision without the patch", func(t *testing.T) {
		body := review(t, "e2e-2", "alice", []string{"devs"}, samplePod(nil))
		resp, b := r.post(t, "/validate", body)
		got := decodeReview(t, resp, b)
		if got.UID != "e2e-2" || !got.Allowed || got.Patch != nil || got.PatchType != nil {
			t.Errorf("response %+v, want allowed without patch", got)
		}
	})

	t.Run("alice may not pre-set user.info", func(t *testing.T) {
		pod := samplePod(map[string]string{userInfoKey: `{"user":"root"}`})
		for _, path := range []string{"/mutate", "/validate"} {
			resp, b := r.post(t, path, review(t, "e2e-3", "alice", []string{"devs"}, pod))
			got := decodeReview(t, resp, b)
			const msg = "user alice with groups [devs] is not allowed to set user annotation"
			if got.UID != "e2e-3" || got.Allowed || got.Result == nil || got.Result.Message != msg || got.Patch != nil {
				t.Errorf("%s: response %+v, want denied with %q", path, got, msg)
			}
		}
	})

	t.Run("an external user may pre-set user.info", func(t *testing.T) {
		pod := samplePod(map[string]string{userInfoKey: `{"user":"bob","groups":["etl"]}`})
		resp, b := r.post(t, "/mutate", review(t, "e2e-4", "system:serviceaccount:airflow:airflow-worker", nil, pod))
		got := decodeReview(t, resp, b)
		// Allowed as it is: aclc leaves YuniKorn's other mutations out, so
		// nothing is patched (spec §4.2 step 4).
		if got.UID != "e2e-4" || !got.Allowed || got.Result != nil || got.Patch != nil {
			t.Errorf("response %+v, want allowed without patch", got)
		}
	})

	t.Run("HTTP/2, which the API server's client prefers", func(t *testing.T) {
		tr := r.client.Transport.(*http.Transport).Clone()
		tr.ForceAttemptHTTP2 = true
		c := &http.Client{Transport: tr}
		defer c.CloseIdleConnections()
		resp, err := c.Post(r.url+"/mutate", "application/json", bytes.NewReader(review(t, "e2e-h2", "alice", nil, samplePod(nil))))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Errorf("protocol %s, want HTTP/2", resp.Proto)
		}
		if got := decodeReview(t, resp, b); got.UID != "e2e-h2" || !got.Allowed || got.Patch == nil {
			t.Errorf("response %+v", got)
		}
	})

	t.Run("an UPDATE over the API server's 3 MiB request limit is decided", func(t *testing.T) {
		// The API server writes each '<' of a string as six bytes
		// (\u003c), so objects well within its 3 MiB request limit and
		// etcd's 1.5 MiB make a review larger than 3 MiB: here 4.5 MiB.
		note := strings.Repeat("<", 1<<19)
		old := strings.Repeat("<", 1<<18)
		in := fmt.Sprintf(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"big-update",`+
			`"kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"default","operation":"UPDATE",`+
			`"userInfo":{"username":"alice"},"object":{"metadata":{"name":"p","annotations":{"note":%q}}},`+
			`"oldObject":{"metadata":{"name":"p","annotations":{"note":%q}}}}}`, note, old)
		in = strings.ReplaceAll(in, "<", `\u003c`)
		if len(in) <= 3<<20 {
			t.Fatalf("review of %d bytes, want more than 3 MiB", len(in))
		}
		resp, b := r.post(t, "/mutate", []byte(in))
		if got := decodeReview(t, resp, b); got.UID != "big-update" || !got.Allowed {
			t.Errorf("response %+v", got)
		}
	})

	t.Run("a body over the limit is denied, not handed to failurePolicy", func(t *testing.T) {
		in := review(t, "big", "alice", nil, samplePod(nil))
		big := append(in[:len(in)-1:len(in)-1], `,"pad":"`...)
		big = append(big, bytes.Repeat([]byte("x"), DefaultBodyLimit)...)
		big = append(big, `"}`...)
		resp, b := r.post(t, "/mutate", big)
		if got := decodeReview(t, resp, b); got.UID != "big" || got.Allowed || got.Result == nil {
			t.Errorf("response %+v", got)
		}
	})

	t.Run("a body that does not decode", func(t *testing.T) {
		resp, b := r.post(t, "/mutate", []byte(`{"request":7}`))
		if resp.StatusCode != 200 || string(b) != invalidBodyAnswer {
			t.Errorf("got %d %s", resp.StatusCode, b)
		}
	})
}

func decodeReview(t *testing.T, resp *http.Response, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &ar); err != nil {
		t.Fatalf("answer is not an AdmissionReview: %v: %s", err, body)
	}
	if ar.Kind != "AdmissionReview" || ar.APIVersion != "admission.k8s.io/v1" || ar.Response == nil || ar.Request != nil {
		t.Fatalf("answer envelope: %s", body)
	}
	return ar.Response
}

// applyPatch applies a JSON patch to the pod as the API server does.
func applyPatch(t *testing.T, pod *corev1.Pod, patch []byte) *corev1.Pod {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("decode patch %s: %v", patch, err)
	}
	orig, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(orig)
	if err != nil {
		t.Fatalf("apply patch %s: %v", patch, err)
	}
	var patched corev1.Pod
	if err := json.Unmarshal(out, &patched); err != nil {
		t.Fatal(err)
	}
	return &patched
}

// TestValidateAfterMutateDenies pins why `aclc webhook manifests` never
// registers /validate next to /mutate: a validating webhook sees the object
// after the mutating ones, so the user.info that /mutate added looks
// pre-set, and an ordinary requester may not pre-set it (spec §4.2 step 3).
func TestValidateAfterMutateDenies(t *testing.T) {
	r := startTLS(t, wasmEngine(t), NewConfig().WithLogger(discard))
	pod := samplePod(nil)
	resp, b := r.post(t, "/mutate", review(t, "m", "alice", []string{"devs"}, pod))
	mutated := applyPatch(t, pod, decodeReview(t, resp, b).Patch)
	resp, b = r.post(t, "/validate", review(t, "v", "alice", []string{"devs"}, mutated))
	got := decodeReview(t, resp, b)
	if got.Allowed || got.Result == nil || got.Result.Message != "user alice with groups [devs] is not allowed to set user annotation" {
		t.Errorf("validating the mutated pod: %+v, want the pre-set denial", got)
	}
}
