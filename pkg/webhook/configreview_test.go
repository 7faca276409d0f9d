package webhook

import (
	"context"
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
		srv := New(&fakeEngine{}, NewConfig().WithLogger(discard).WithDecisionTimeout(deadline).WithConfigReviewer(tt.reviewer))
		code, body := post(srv)
		if want := envelope + tt.want + "}"; code != 200 || body != want {
			t.Errorf("%s: %d %s\nwant %s", tt.name, code, body, want)
		}
	}
}
