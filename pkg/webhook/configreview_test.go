package webhook

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type reviewerFunc func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

func (f reviewerFunc) ReviewConfig(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return f(ctx, req)
}

const configMapReview = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"c-1",` +
	`"kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},` +
	`"name":"yunikorn-configs","namespace":"yunikorn","operation":"UPDATE","userInfo":{"username":"admin"},` +
	`"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"yunikorn-configs","namespace":"yunikorn"},"data":{"queues.yaml":""}}}}`

// /validate-config is served only with a reviewer; its answer carries the
// review's uid, the reviewer's verdict and warnings; a reviewer that does
// not answer in time, or panics, admits the change with a warning that
// says it was not checked: only the reviewer's verdict refuses.
func TestValidateConfigRoute(t *testing.T) {
	post := func(srv *Server) (int, string) {
		req := httptest.NewRequest("POST", "/validate-config", strings.NewReader(configMapReview))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := post(New(&fakeEngine{}, NewConfig().WithLogger(discard))); code != 404 || !strings.Contains(body, msgUnknownPath) {
		t.Errorf("without a reviewer: %d %s", code, body)
	}
	const deadline = 100 * time.Millisecond
	for _, tt := range []struct {
		name     string
		reviewer reviewerFunc
		want     string
	}{
		{"an admitted change with warnings", func(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Name != "yunikorn-configs" || req.Namespace != "yunikorn" {
				t.Errorf("request %s/%s", req.Namespace, req.Name)
			}
			return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"- alice: submit on root.a"}}
		}, `{"uid":"c-1","allowed":true,"warnings":["- alice: submit on root.a"]}`},
		{"a refused change", func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "duplicate child name found with name 'a', level 1"}}
		}, `{"uid":"c-1","allowed":false,"status":{"metadata":{},"message":"duplicate child name found with name 'a', level 1"}}`},
		{"a reviewer past the deadline", func(ctx context.Context, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			time.Sleep(20 * deadline)
			return &admissionv1.AdmissionResponse{Allowed: true}
		}, `{"uid":"c-1","allowed":true,"warnings":["aclc: this change was not checked, admitted: no decision within the 100ms deadline"]}`},
		{"a reviewer that panics", func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			panic("boom")
		}, `{"uid":"c-1","allowed":true,"warnings":["aclc: this change was not checked, admitted: panic: boom"]}`},
		{"a reviewer with no answer", func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return nil
		}, `{"uid":"c-1","allowed":true,"warnings":["aclc: this change was not checked, admitted: the reviewer gave no answer"]}`},
	} {
		// Only the case about the deadline runs under it: the others
		// answer at once, and a loaded machine must not time them out.
		d := time.Minute
		if strings.Contains(tt.name, "deadline") {
			d = deadline
		}
		srv := New(&fakeEngine{}, NewConfig().WithLogger(discard).WithDecisionTimeout(d).WithConfigReviewer(tt.reviewer))
		code, body := post(srv)
		if want := envelope + tt.want + "}"; code != 200 || body != want {
			t.Errorf("%s: %d %s\nwant %s", tt.name, code, body, want)
		}
	}
}

// TestValidateConfigHasItsOwnDeadline pins that /validate-config waits
// for its own deadline, not the pod reviews': a judgement that takes
// longer than the decision deadline is still given, and the write timeout
// must exceed the longer of the two.
func TestValidateConfigHasItsOwnDeadline(t *testing.T) {
	slow := reviewerFunc(func(ctx context.Context, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "refused late"}}
	})
	for _, tc := range []struct {
		name          string
		configTimeout time.Duration
		want          string
	}{
		{"the decision deadline alone", 0, `"allowed":true,"warnings":["aclc: this change was not checked, admitted: no decision within the 50ms deadline"]`},
		{"a config deadline of its own", 5 * time.Second, `"allowed":false,"status":{"metadata":{},"message":"refused late"}`},
	} {
		cfg := NewConfig().WithLogger(discard).WithDecisionTimeout(50 * time.Millisecond).WithConfigDecisionTimeout(tc.configTimeout).WithConfigReviewer(slow)
		req := httptest.NewRequest("POST", "/validate-config", strings.NewReader(configMapReview))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		New(&fakeEngine{}, cfg).Handler().ServeHTTP(rec, req)
		if !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %s\nwant %s", tc.name, rec.Body.String(), tc.want)
		}
	}
	cert, _, err := SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig().WithLogger(discard).WithDecisionTimeout(time.Second).WithConfigDecisionTimeout(9 * time.Second).
		WithWriteTimeout(3 * time.Second).WithConfigReviewer(slow).WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := New(&fakeEngine{}, cfg).Serve(context.Background(), ln); err == nil || !strings.Contains(err.Error(), "not longer than the decision deadline 9s") {
		t.Errorf("a write timeout under the config deadline: %v, want refused", err)
	}
}
