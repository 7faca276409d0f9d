package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// The HTTP answers of YuniKorn's webhook (spec §2; upstream
// admission_controller.go Serve).
const (
	msgInvalidBody  = "empty or invalid body"
	msgContentType  = "invalid Content-Type, expect `application/json`"
	msgUnknownPath  = "request is neither mutation nor validation"
	contentTypeJSON = "application/json"

	// reviewV1 is the envelope's apiVersion unless the review came in
	// v1beta1, which the API server still sends to a webhook registered
	// with admissionReviewVersions [v1beta1] and reads back only in kind.
	reviewV1      = "admission.k8s.io/v1"
	reviewV1beta1 = "admission.k8s.io/v1beta1"
	// invalidBody answers a body that does not decode or has no request.
	invalidBody = `{"uid":"yunikorn-invalid-body","allowed":false,"status":{"metadata":{},"message":"body decode failed"}}`
)

// deserializer is YuniKorn's: the universal deserializer of an empty
// scheme. AdmissionReview is not registered, so kind and apiVersion are not
// required, field names are case-sensitive (sigs.k8s.io/json), a wrongly
// typed field anywhere in the request fails the whole body, and YAML is
// accepted too.
var deserializer = serializer.NewCodecFactory(runtime.NewScheme()).UniversalDeserializer()

// serveReview is YuniKorn's Serve, in its order: body, Content-Type, path,
// decoding; then the engine's decision.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// A path no review is served on is 404 whatever the request holds:
	// YuniKorn registers its Serve on its review paths only, so that any
	// other path meets its mux's 404 before a body is read.
	ep := entrypoints[r.URL.Path]
	if ep == "" {
		http.Error(w, msgUnknownPath, http.StatusNotFound)
		return
	}
	// The deadline counts from the review's arrival: the API server's
	// timeout covers the whole call, reading and decoding included.
	deadline := s.cfg.deadline()
	ctx, cancel := context.WithTimeout(r.Context(), deadline)
	defer cancel()
	body, ok := s.readBody(w, r, start)
	if !ok {
		return
	}
	validate := r.URL.Path != pathMutate
	// The decision does not depend on the typed decoding, which only
	// tells a body YuniKorn refuses: the engine starts at once and the
	// decoding runs beside it (a tenth of a second for a review of
	// 300,000 groups), its answer first when the body does not decode.
	decision := s.decideAsync(ctx, body, ep, validate)
	var ar admissionv1.AdmissionReview
	if _, _, err := deserializer.Decode(body, nil, &ar); err != nil || ar.Request == nil {
		decision.cancel()
		s.decided(r.URL.Path, "yunikorn-invalid-body", false, start)
		writeReview(w, reviewV1, []byte(invalidBody))
		return
	}
	resp, allowed, err := decision.wait()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Whatever the engine said on its way out, the answer is the
		// deadline's.
		err = fmt.Errorf("no decision within the %s deadline", deadline)
	}
	if err != nil {
		s.m.engineError(r.URL.Path)
		s.log.Error("webhook: no decision, denied", "uid", string(ar.Request.UID), "path", r.URL.Path, "error", err)
		resp, allowed = internalError(ar.Request.UID, err), false
	}
	s.decided(r.URL.Path, string(ar.Request.UID), allowed, start)
	version := reviewV1
	if ar.APIVersion == reviewV1beta1 {
		version = reviewV1beta1
	}
	writeReview(w, version, resp)
}

// readBody reads a review's body as YuniKorn's Serve does: at most the
// body limit (a larger one carrying a uid is denied for that uid), not
// empty, Content-Type exactly application/json. When it returns false the
// answer is written.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, start time.Time) ([]byte, bool) {
	// MaxBytesReader is given net/http's own writer, so that an oversized
	// body also closes the connection.
	raw := w
	if sw, ok := w.(*statusWriter); ok {
		raw = sw.ResponseWriter
	}
	body, err := io.ReadAll(http.MaxBytesReader(raw, r.Body, s.cfg.limit()))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		// Larger than anything the API server sends. A 400 would hand
		// the decision to failurePolicy (Ignore for YuniKorn: admitted
		// without user.info); a denial for the review's uid, which the
		// API server writes first, refuses it instead.
		if uid, ok := leadingUID(body); ok && r.Header.Get("Content-Type") == contentTypeJSON {
			s.decided(r.URL.Path, uid, false, start)
			s.log.Warn("webhook: body over the limit, denied", "uid", uid, "limit", tooLarge.Limit)
			resp, _ := json.Marshal(&admissionv1.AdmissionResponse{
				UID:     types.UID(uid),
				Allowed: false,
				Result:  &metav1.Status{Message: fmt.Sprintf("admission review larger than %d bytes, more than the API server sends", tooLarge.Limit)},
			})
			writeReview(w, reviewV1, resp)
			return nil, false
		}
	}
	if err != nil || len(body) == 0 {
		http.Error(w, msgInvalidBody, http.StatusBadRequest)
		return nil, false
	}
	// Exactly: "application/json; charset=utf-8" is refused, as YuniKorn
	// refuses it (the API server always sends the bare type).
	if r.Header.Get("Content-Type") != contentTypeJSON {
		http.Error(w, msgContentType, http.StatusUnsupportedMediaType)
		return nil, false
	}
	return body, true
}

// decided counts a review's answer and, with decision logs on, logs it: one
// line per review, as OPA's decision log has one per decision.
func (s *Server) decided(path, uid string, allowed bool, start time.Time) {
	s.m.decision(path, allowed)
	if !s.cfg.decisionLogs {
		return
	}
	s.log.Info("Decision Log", "uid", uid, "path", path, "allowed", allowed,
		"duration_ms", float64(time.Since(start).Microseconds())/1000)
}

// entrypoints is the decision each review path answers with.
var entrypoints = func() map[string]string {
	m := map[string]string{}
	for _, d := range translate.Decisions() {
		for _, p := range d.WebhookPaths {
			m[p] = d.Entrypoint
		}
	}
	return m
}()

// decide asks the engine for the decision ep and checks its answer. For a
// validating path the patch fields are dropped: a validating webhook must
// not return a patch.
func (s *Server) decide(ctx context.Context, body []byte, ep string, validate bool) (json.RawMessage, bool, error) {
	input := body
	if !json.Valid(body) {
		// The deserializer took it as YAML; the engine reads JSON.
		var err error
		if input, err = yaml.YAMLToJSON(body); err != nil {
			return nil, false, fmt.Errorf("convert YAML body: %w", err)
		}
	}
	// Only an object decodes as an AdmissionReview: anything else is the
	// decoding's answer, and no engine need see it.
	if t := bytes.TrimLeft(input, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, false, errors.New("the body is not an AdmissionReview object")
	}
	out, err := s.eval(ctx, ep, input)
	if err != nil {
		return nil, false, err
	}
	resp, head, err := parseAnswer(out)
	if err != nil {
		return nil, false, err
	}
	if validate {
		var ar admissionv1.AdmissionResponse
		if err := json.Unmarshal(resp, &ar); err != nil {
			return nil, false, fmt.Errorf("engine answer: %w", err)
		}
		ar.Patch, ar.PatchType = nil, nil
		if resp, err = json.Marshal(&ar); err != nil {
			return nil, false, fmt.Errorf("engine answer: %w", err)
		}
	}
	return resp, *head.Allowed, nil
}

// pendingDecision is a decide running in its own goroutine.
type pendingDecision struct {
	done   chan decision
	cancel context.CancelFunc
}

type decision struct {
	resp    json.RawMessage
	allowed bool
	err     error
	panic   any
}

// decideAsync starts decide on a context of its own, derived from ctx.
func (s *Server) decideAsync(ctx context.Context, body []byte, ep string, validate bool) pendingDecision {
	ctx, cancel := context.WithCancel(ctx)
	p := pendingDecision{done: make(chan decision, 1), cancel: cancel}
	go func() {
		var d decision
		defer func() {
			if v := recover(); v != nil {
				d.panic = v
			}
			p.done <- d
		}()
		d.resp, d.allowed, d.err = s.decide(ctx, body, ep, validate)
	}()
	return p
}

// wait returns the decision; a panic in it is panicked again here, in
// the handler's goroutine, where serveHTTP answers it.
func (p pendingDecision) wait() (json.RawMessage, bool, error) {
	d := <-p.done
	p.cancel()
	if d.panic != nil {
		panic(d.panic)
	}
	return d.resp, d.allowed, d.err
}

// eval asks the engine and returns when it answers or when ctx is done,
// whichever comes first: an engine that does not stop at its context's
// deadline (a call it cannot interrupt) still gets the review answered in
// time, while it finishes in the background. A panic in the engine is
// panicked again here, where serveHTTP answers it.
func (s *Server) eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	type answer struct {
		out   json.RawMessage
		err   error
		panic any
	}
	done := make(chan answer, 1)
	eng := s.engine()
	go func() {
		var a answer
		defer func() {
			if v := recover(); v != nil {
				a.panic = v
			}
			done <- a
		}()
		a.out, a.err = eng.Eval(ctx, ep, input)
	}()
	select {
	case a := <-done:
		if a.panic != nil {
			panic(a.panic)
		}
		return a.out, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// leadingUID finds request.uid in the first part of a review cut short:
// the API server writes the envelope's kind and apiVersion, then request
// with uid as its first field, so the uid is near the start of a body of
// any size.
func leadingUID(prefix []byte) (string, bool) {
	type frame struct {
		isObject, wantKey bool
		key               string
	}
	var stack []frame
	d := json.NewDecoder(bytes.NewReader(prefix))
	for {
		t, err := d.Token()
		if err != nil {
			return "", false
		}
		top := len(stack) - 1
		if k, ok := t.(string); ok && top >= 0 && stack[top].isObject && stack[top].wantKey {
			stack[top].key, stack[top].wantKey = k, false
			continue
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, frame{isObject: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		default:
			if uid, ok := t.(string); ok && len(stack) == 2 && stack[0].key == "request" && stack[1].key == "uid" {
				return uid, true
			}
		}
		if n := len(stack) - 1; n >= 0 && stack[n].isObject {
			stack[n].wantKey = true
		}
	}
}

// answerHead is what the server needs to know of an engine's answer.
type answerHead struct {
	UID     string `json:"uid"`
	Allowed *bool  `json:"allowed"`
}

// parseAnswer returns the response object of the AdmissionReview an engine
// answered; an answer without a boolean response.allowed is an error.
func parseAnswer(out []byte) (json.RawMessage, answerHead, error) {
	var env struct {
		Response json.RawMessage `json:"response"`
	}
	var head answerHead
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, head, fmt.Errorf("engine answer: %w", err)
	}
	if err := json.Unmarshal(env.Response, &head); err != nil || head.Allowed == nil {
		return nil, head, errors.New("engine answer: no response with a boolean allowed")
	}
	return env.Response, head, nil
}

// internalError is the denial for a decision the engine could not make.
func internalError(uid types.UID, err error) json.RawMessage {
	b, _ := json.Marshal(&admissionv1.AdmissionResponse{
		UID:     uid,
		Allowed: false,
		Result:  &metav1.Status{Message: "internal error: " + err.Error()},
	})
	return b
}

// writeReview writes the AdmissionReview envelope of apiVersion version
// around resp, in YuniKorn's key order.
func writeReview(w http.ResponseWriter, version string, resp []byte) {
	var b bytes.Buffer
	head := `{"kind":"AdmissionReview","apiVersion":"` + version + `","response":`
	b.Grow(len(head) + len(resp) + 1)
	b.WriteString(head)
	if json.Compact(&b, resp) != nil {
		b.Write(resp) // unreachable: resp was decoded or marshalled
	}
	b.WriteByte('}')
	h := w.Header()
	h.Set("Content-Type", contentTypeJSON)
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
}

// probeUID marks the review Probe sends.
const probeUID = "aclc-webhook-readiness-probe"

// probeReview is a Pod CREATE by a made-up user, which any engine serving
// the admission decision answers.
var probeReview = []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"` + probeUID + `",` +
	`"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},` +
	`"namespace":"default","operation":"CREATE","userInfo":{"username":"aclc-webhook-probe","groups":["system:authenticated"]},` +
	`"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"aclc-webhook-probe","namespace":"default"},"spec":{"containers":[{"name":"c","image":"probe"}]}}}}`)

// Probe asks the engine for a decision on a sample review. When the answer
// is a well-formed AdmissionReview for that review, the server is ready:
// /readyz answers 200 until shutdown. Serve probes before it accepts
// connections; call Probe yourself when mounting Handler on a server of
// your own.
func (s *Server) Probe(ctx context.Context) error {
	out, err := s.engine().Eval(ctx, translate.EntrypointAdmissionGuard, probeReview)
	if err != nil {
		return fmt.Errorf("webhook: probe review: %w", err)
	}
	_, head, err := parseAnswer(out)
	if err != nil {
		return fmt.Errorf("webhook: probe review: %w", err)
	}
	if head.UID != probeUID {
		return fmt.Errorf("webhook: probe review: the answer's uid is %q, want %q", head.UID, probeUID)
	}
	s.ready.Store(true)
	return nil
}
