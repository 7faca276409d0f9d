package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pathValidateConfig is where the server reviews changes to YuniKorn's own
// ConfigMaps, when Config.WithConfigReviewer gives it a reviewer.
const pathValidateConfig = "/validate-config"

// ConfigReviewer answers a review of a ConfigMap: YuniKorn's own
// validation of yunikorn-configs and yunikorn-defaults, and what the change
// does, as warnings. It should return within ctx's deadline.
type ConfigReviewer interface {
	ReviewConfig(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

// WithConfigReviewer serves /validate-config with r; without one the path
// is not served (404, as any other).
func (c Config) WithConfigReviewer(r ConfigReviewer) Config {
	c.configReviewer = r
	return c
}

// serveConfigReview reads a review as serveReview does (body, limit,
// Content-Type, YuniKorn's decoding) and answers with the reviewer's
// response. Only the reviewer refuses: a reviewer that does not answer by
// the deadline, or fails, admits the change with a warning that says it
// was not checked, as YuniKorn's own admission controller admits a
// ConfigMap when its validator does not answer. A refusal for aclc's own
// want of time or fault would keep operators from changing (or reverting)
// YuniKorn's configuration, and it would come exactly when the webhook's
// failurePolicy (Ignore) says a missing answer admits.
func (s *Server) serveConfigReview(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	deadline := s.cfg.configDeadline()
	ctx, cancel := context.WithTimeout(r.Context(), deadline)
	defer cancel()
	body, ok := s.readBody(w, r, start)
	if !ok {
		return
	}
	var ar admissionv1.AdmissionReview
	if _, _, err := deserializer.Decode(body, nil, &ar); err != nil || ar.Request == nil {
		s.decided(r.URL.Path, "yunikorn-invalid-body", false, start)
		writeReview(w, reviewV1, []byte(invalidBody))
		return
	}
	type answer struct {
		resp *admissionv1.AdmissionResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- answer{err: fmt.Errorf("panic: %v", v)}
			}
		}()
		done <- answer{resp: s.cfg.configReviewer.ReviewConfig(ctx, ar.Request)}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		a.err = fmt.Errorf("no decision within the %s deadline", deadline)
	}
	if a.err == nil && a.resp == nil {
		a.err = errors.New("the reviewer gave no answer")
	}
	if a.err != nil {
		s.m.engineError(r.URL.Path)
		s.log.Error("webhook: change not checked, admitted", "uid", string(ar.Request.UID), "path", r.URL.Path, "error", a.err)
		a.resp = &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"aclc: this change was not checked, admitted: " + a.err.Error()}}
	}
	a.resp.UID = ar.Request.UID
	if !a.resp.Allowed && a.resp.Result == nil {
		a.resp.Result = &metav1.Status{}
	}
	resp, _ := json.Marshal(a.resp)
	s.decided(r.URL.Path, string(ar.Request.UID), a.resp.Allowed, start)
	version := reviewV1
	if ar.APIVersion == reviewV1beta1 {
		version = reviewV1beta1
	}
	writeReview(w, version, resp)
}
