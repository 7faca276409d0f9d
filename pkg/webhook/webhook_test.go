package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/opsmetrics"
	"github.com/aclc-dev/aclc/pkg/opsmetrics/opsmetricstest"
)

const (
	envelope = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":`
	// invalidBodyAnswer is YuniKorn's answer to a body without a usable
	// request (spec §2, §6).
	invalidBodyAnswer = envelope + `{"uid":"yunikorn-invalid-body","allowed":false,"status":{"metadata":{},"message":"body decode failed"}}}`
	podReview         = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"default","operation":"CREATE","userInfo":{"username":"alice","groups":["devs"]},"object":{"metadata":{"name":"p"}}}}`
)

// TestReviewHTTPRules pins the HTTP handling of YuniKorn's webhook, in its
// order on its review paths: body, then Content-Type, then path, then
// decoding (spec §2; upstream pkg/admission/admission_controller.go Serve),
// a 404 for any other path, as its mux gives, and what aclc adds:
// the body limit, /validate without the patch, deny on an engine error.
func TestReviewHTTPRules(t *testing.T) {
	tests := []struct {
		name        string
		method      string // POST unless set
		path        string
		contentType string // application/json unless set; "-" for none
		body        string
		limit       int64
		answer      func(context.Context, []byte) (json.RawMessage, error)

		wantCode        int
		wantBody        string
		wantContentType string // application/json for a 200, text/plain otherwise
		wantEngine      bool   // the engine was asked
		// engineMayRun: the decision starts beside the typed decoding,
		// which alone tells a body YuniKorn refuses; for an object that
		// then fails to decode the engine may or may not have been asked,
		// and the answer is the decoding's either way.
		engineMayRun bool
	}{
		{name: "an empty body is refused 400",
			path: "/mutate", body: "",
			wantCode: 400, wantBody: "empty or invalid body\n"},
		{name: "a body over the limit is denied for the uid it starts with",
			path: "/mutate", body: podReview, limit: 100,
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"admission review larger than 100 bytes, more than the API server sends"}}}`},
		{name: "a body over the limit with no uid in reach is refused 400",
			path: "/mutate", body: podReview, limit: 64,
			wantCode: 400, wantBody: "empty or invalid body\n"},
		{name: "a body over the limit on an unknown path is 404",
			path: "/other", body: podReview, limit: 100,
			wantCode: 404, wantBody: "request is neither mutation nor validation\n"},
		{name: "a body at the limit is read",
			path: "/mutate", body: podReview, limit: int64(len(podReview)),
			wantCode: 200, wantBody: envelope + `{"patch":"` + fakePatch + `","patchType":"JSONPatch","uid":"u-1","allowed":true}}`, wantEngine: true},
		{name: "the body is checked before the Content-Type",
			path: "/mutate", contentType: "text/plain", body: "",
			wantCode: 400, wantBody: "empty or invalid body\n"},
		{name: "a Content-Type other than application/json is refused 415",
			path: "/mutate", contentType: "text/plain", body: podReview,
			wantCode: 415, wantBody: "invalid Content-Type, expect `application/json`\n"},
		{name: "a charset parameter is refused: the Content-Type must be exactly application/json",
			path: "/mutate", contentType: "application/json; charset=utf-8", body: podReview,
			wantCode: 415, wantBody: "invalid Content-Type, expect `application/json`\n"},
		{name: "a missing Content-Type is refused 415",
			path: "/mutate", contentType: "-", body: podReview,
			wantCode: 415, wantBody: "invalid Content-Type, expect `application/json`\n"},
		{name: "an unknown path is 404 whatever its Content-Type",
			path: "/nowhere", contentType: "text/plain", body: podReview,
			wantCode: 404, wantBody: "request is neither mutation nor validation\n"},
		{name: "an unknown path is 404 without a body",
			method: "GET", path: "/nowhere", contentType: "-", body: "",
			wantCode: 404, wantBody: "request is neither mutation nor validation\n"},
		{name: "an unknown path is refused 404",
			path: "/nowhere", body: podReview,
			wantCode: 404, wantBody: "request is neither mutation nor validation\n"},
		{name: "YuniKorn's /validate-conf is not served",
			path: "/validate-conf", body: podReview,
			wantCode: 404, wantBody: "request is neither mutation nor validation\n"},
		{name: "the path is checked before the body is decoded",
			path: "/", body: "not json",
			wantCode: 404, wantBody: "request is neither mutation nor validation\n"},
		{name: "a body that does not decode is answered 200 with yunikorn-invalid-body",
			path: "/mutate", body: "not json",
			wantCode: 200, wantBody: invalidBodyAnswer},
		{name: "a review without request is answered as an invalid body",
			path: "/mutate", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}`,
			wantCode: 200, wantBody: invalidBodyAnswer, engineMayRun: true},
		{name: "a wrongly typed request field fails the whole body",
			path: "/validate", body: `{"request":{"uid":1}}`,
			wantCode: 200, wantBody: invalidBodyAnswer, engineMayRun: true},
		{name: "request field names are case-sensitive",
			path: "/mutate", body: `{"Request":{"uid":"u"}}`,
			wantCode: 200, wantBody: invalidBodyAnswer, engineMayRun: true},
		{name: "the method is not checked",
			method: "PUT", path: "/mutate", body: podReview,
			wantCode: 200, wantBody: envelope + `{"patch":"` + fakePatch + `","patchType":"JSONPatch","uid":"u-1","allowed":true}}`, wantEngine: true},
		{name: "/mutate answers the engine's response as it is, in YuniKorn's envelope",
			path: "/mutate", body: podReview,
			wantCode: 200, wantBody: envelope + `{"patch":"` + fakePatch + `","patchType":"JSONPatch","uid":"u-1","allowed":true}}`, wantEngine: true},
		{name: "/validate answers the same decision without the patch",
			path: "/validate", body: podReview,
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":true}}`, wantEngine: true},
		{name: "/mutate passes a denial on",
			path: "/mutate", body: podReview, answer: denyWith("user info annotation change is not allowed"),
			wantCode: 200, wantBody: envelope + `{"allowed":false,"status":{"message":"user info annotation change is not allowed","metadata":{}},"uid":"u-1"}}`, wantEngine: true},
		{name: "/validate passes a denial on",
			path: "/validate", body: podReview, answer: denyWith("user info annotation change is not allowed"),
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"user info annotation change is not allowed"}}}`, wantEngine: true},
		{name: "an engine error is a denial with the reason, the uid echoed",
			path: "/mutate", body: podReview,
			answer:   func(context.Context, []byte) (json.RawMessage, error) { return nil, errors.New("wasm: out of memory") },
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"internal error: wasm: out of memory"}}}`, wantEngine: true},
		{name: "an engine answer without response.allowed is a denial",
			path: "/validate", body: podReview,
			answer: func(context.Context, []byte) (json.RawMessage, error) {
				return json.RawMessage(`{"response":{"uid":"u-1"}}`), nil
			},
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"internal error: engine answer: no response with a boolean allowed"}}}`, wantEngine: true},
		{name: "an engine answer that is not JSON is a denial",
			path: "/mutate", body: podReview,
			answer:   func(context.Context, []byte) (json.RawMessage, error) { return json.RawMessage(`{`), nil },
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"internal error: engine answer: unexpected end of JSON input"}}}`, wantEngine: true},
		{name: "a v1beta1 review is answered in v1beta1",
			path: "/validate", body: strings.Replace(podReview, "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1),
			wantCode: 200, wantBody: strings.Replace(envelope, "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1) + `{"uid":"u-1","allowed":true}}`, wantEngine: true},
		{name: "a review without apiVersion is answered in v1",
			path: "/validate", body: strings.Replace(podReview, `"apiVersion":"admission.k8s.io/v1",`, "", 1),
			wantCode: 200, wantBody: envelope + `{"uid":"u-1","allowed":true}}`, wantEngine: true},
		{name: "a YAML body decodes, as in YuniKorn, and reaches the engine as JSON",
			path: "/mutate", body: "request:\n  uid: u-yaml\n  kind: {kind: Pod}\n",
			wantCode: 200, wantBody: envelope + `{"patch":"` + fakePatch + `","patchType":"JSONPatch","uid":"u-yaml","allowed":true}}`, wantEngine: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := &fakeEngine{answer: tt.answer}
			srv := New(eng, NewConfig().WithBodyLimit(tt.limit).WithLogger(discard))
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, tt.path, strings.NewReader(tt.body))
			switch tt.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)

			if rec.Code != tt.wantCode {
				t.Errorf("status %d, want %d", rec.Code, tt.wantCode)
			}
			if got := rec.Body.String(); got != tt.wantBody {
				t.Errorf("body\n got %s\nwant %s", got, tt.wantBody)
			}
			wantCT := "text/plain; charset=utf-8"
			if tt.wantCode == 200 {
				wantCT = "application/json"
			}
			if got := rec.Header().Get("Content-Type"); got != wantCT {
				t.Errorf("Content-Type %q, want %q", got, wantCT)
			}
			if got := eng.calls() > 0; got != tt.wantEngine && !tt.engineMayRun {
				t.Errorf("engine asked: %v, want %v", got, tt.wantEngine)
			}
			for _, in := range eng.seen() {
				if !json.Valid(in) {
					t.Errorf("the engine was given something other than JSON: %q", in)
				}
			}
			if tt.wantCode == 200 {
				var ar struct {
					Response map[string]any `json:"response"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil {
					t.Fatalf("answer is not JSON: %v", err)
				}
				if tt.path == "/validate" {
					if _, ok := ar.Response["patch"]; ok {
						t.Errorf("/validate answered a patch")
					}
					if _, ok := ar.Response["patchType"]; ok {
						t.Errorf("/validate answered a patchType")
					}
				}
			}
		})
	}
}

// TestEngineTimeout: every review is answered by its decision deadline,
// counted from its arrival; a decision that runs out of time is a denial
// that names the deadline, whether the engine stops at its context's
// deadline or not (then it goes on in the background, and its late answer
// is dropped).
func TestEngineTimeout(t *testing.T) {
	const deadline = 100 * time.Millisecond
	tests := []struct {
		name   string
		answer func(context.Context, []byte) (json.RawMessage, error)
	}{
		{"an engine that stops at the deadline", func(ctx context.Context, _ []byte) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, fmt.Errorf("wasm: evaluation interrupted: %w", ctx.Err())
		}},
		{"an engine that does not stop", func(_ context.Context, in []byte) (json.RawMessage, error) {
			time.Sleep(20 * deadline)
			return allowWithPatch(in), nil
		}},
		{"an engine that allows just after the deadline", func(ctx context.Context, in []byte) (json.RawMessage, error) {
			<-ctx.Done()
			return allowWithPatch(in), nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(&fakeEngine{answer: tt.answer}, NewConfig().WithDecisionTimeout(deadline).WithLogger(discard))
			for _, path := range []string{"/mutate", "/validate"} {
				req := httptest.NewRequest("POST", path, strings.NewReader(podReview))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				start := time.Now()
				srv.Handler().ServeHTTP(rec, req)
				took := time.Since(start)
				want := envelope + `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"internal error: no decision within the 100ms deadline"}}}`
				if rec.Code != 200 || rec.Body.String() != want {
					t.Errorf("%s: got %d %s\nwant 200 %s", path, rec.Code, rec.Body, want)
				}
				// Generous: the point is that the answer does not wait
				// for the engine (2s here).
				if took > 10*deadline {
					t.Errorf("%s: answered after %s, deadline %s", path, took, deadline)
				}
			}
		})
	}
}

// TestDecisionTimeout: the deadline leaves the API server a second to
// receive the denial (half its wait under two seconds).
func TestDecisionTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeoutSeconds int
		want           time.Duration
	}{
		{1, 500 * time.Millisecond}, {2, time.Second}, {3, 2 * time.Second}, {10, 9 * time.Second}, {30, 29 * time.Second},
	} {
		if got := DecisionTimeout(tt.timeoutSeconds); got != tt.want {
			t.Errorf("DecisionTimeout(%d) = %s, want %s", tt.timeoutSeconds, got, tt.want)
		}
	}
	if got := DecisionTimeout(DefaultTimeoutSeconds); got != DefaultDecisionTimeout || DefaultWriteTimeout <= got {
		t.Errorf("defaults: deadline %s for timeoutSeconds %d (DefaultDecisionTimeout %s), write timeout %s",
			got, DefaultTimeoutSeconds, DefaultDecisionTimeout, DefaultWriteTimeout)
	}
}

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestProbes: /healthz answers while the process runs; /readyz only once
// the engine has answered the probe review.
func TestProbes(t *testing.T) {
	srv := New(&fakeEngine{}, NewConfig().WithLogger(discard))
	h := srv.Handler()
	if rec := get(t, h, "GET", "/healthz"); rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("/healthz before start: %d %q", rec.Code, rec.Body)
	}
	if rec := get(t, h, "GET", "/readyz"); rec.Code != 503 {
		t.Errorf("/readyz before the probe: %d, want 503", rec.Code)
	}
	if err := srv.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec := get(t, h, "GET", "/readyz"); rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("/readyz after the probe: %d %q, want 200", rec.Code, rec.Body)
	}
	if rec := get(t, h, "HEAD", "/readyz"); rec.Code != 200 {
		t.Errorf("HEAD /readyz: %d, want 200", rec.Code)
	}
	if rec := get(t, h, "POST", "/healthz"); rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /healthz: %d Allow %q, want 405 and GET, HEAD", rec.Code, rec.Header().Get("Allow"))
	}
}

func TestProbeFailures(t *testing.T) {
	tests := []struct {
		name   string
		answer func(context.Context, []byte) (json.RawMessage, error)
		want   string
	}{
		{"an engine error", func(context.Context, []byte) (json.RawMessage, error) {
			return nil, errors.New("unknown entrypoint")
		}, "webhook: probe review: unknown entrypoint"},
		{"an answer that is not a review", func(context.Context, []byte) (json.RawMessage, error) {
			return json.RawMessage(`{"allow":true}`), nil
		}, "webhook: probe review: engine answer: no response with a boolean allowed"},
		{"an answer for another review", func(context.Context, []byte) (json.RawMessage, error) {
			return json.RawMessage(`{"response":{"uid":"x","allowed":true}}`), nil
		}, `webhook: probe review: the answer's uid is "x", want "aclc-webhook-readiness-probe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(&fakeEngine{answer: tt.answer}, NewConfig())
			err := srv.Probe(context.Background())
			if err == nil || err.Error() != tt.want {
				t.Errorf("Probe = %v, want %s", err, tt.want)
			}
			if rec := get(t, srv.Handler(), "GET", "/readyz"); rec.Code != 503 {
				t.Errorf("/readyz after a failed probe: %d, want 503", rec.Code)
			}
		})
	}
}

// TestPanicIsAnswered500: a panic in the engine does not take the server
// down; the next request is answered.
func TestPanicIsAnswered500(t *testing.T) {
	var n int
	eng := &fakeEngine{answer: func(_ context.Context, in []byte) (json.RawMessage, error) {
		n++
		if n == 1 {
			panic("engine bug")
		}
		return allowWithPatch(in), nil
	}}
	srv := New(eng, NewConfig().WithLogger(discard))
	for i, want := range []int{500, 200} {
		req := httptest.NewRequest("POST", "/mutate", strings.NewReader(podReview))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("request %d: status %d, want %d (%s)", i, rec.Code, want, rec.Body)
		}
	}
	m := scrape(t, srv.Handler())
	if m["aclc_webhook_panics_total"] != 1 || m[`aclc_webhook_requests_total{code="500",path="/mutate"}`] != 1 {
		t.Errorf("panic not counted: %v", m)
	}
}

// scrape reads /metrics into series → value with Prometheus' own parser
// (labels sorted by name), which refuses a malformed scrape.
func scrape(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	rec := get(t, h, "GET", "/metrics")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	out, _, err := opsmetricstest.Parse(rec.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return out
}

// TestMetricsCount: every request is counted by path and code, every
// answered review by its allowed field, every engine error, and the
// admission requests' durations.
func TestMetricsCount(t *testing.T) {
	fail := false
	eng := &fakeEngine{answer: func(_ context.Context, in []byte) (json.RawMessage, error) {
		if fail {
			return nil, errors.New("boom")
		}
		return allowWithPatch(in), nil
	}}
	srv := New(eng, NewConfig().WithLogger(discard))
	h := srv.Handler()
	send := func(path, body string) {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	send("/mutate", podReview)   // 200 allowed
	send("/mutate", podReview)   // 200 allowed
	send("/validate", podReview) // 200 allowed
	send("/mutate", "")          // 400
	send("/mutate", "junk")      // 200 denied (invalid body)
	send("/x/y", podReview)      // 404, path "other"
	fail = true
	send("/validate", podReview) // 200 denied (engine error)
	get(t, h, "GET", "/healthz")

	m := scrape(t, h)
	want := map[string]float64{
		`aclc_webhook_requests_total{code="200",path="/mutate"}`:                     3,
		`aclc_webhook_requests_total{code="400",path="/mutate"}`:                     1,
		`aclc_webhook_requests_total{code="200",path="/validate"}`:                   2,
		`aclc_webhook_requests_total{code="404",path="other"}`:                       1,
		`aclc_webhook_requests_total{code="200",path="/healthz"}`:                    1,
		`aclc_webhook_decisions_total{allowed="true",path="/mutate"}`:                2,
		`aclc_webhook_decisions_total{allowed="true",path="/validate"}`:              1,
		`aclc_webhook_decisions_total{allowed="false",path="/mutate"}`:               1,
		`aclc_webhook_decisions_total{allowed="false",path="/validate"}`:             1,
		`aclc_webhook_engine_errors_total{path="/validate"}`:                         1,
		`aclc_webhook_panics_total`:                                                  0,
		`aclc_webhook_reloads_total`:                                                 0,
		`aclc_webhook_last_reload_failed`:                                            0,
		`aclc_webhook_request_duration_seconds_count{path="/mutate"}`:                4,
		`aclc_webhook_request_duration_seconds_bucket{le="+Inf",path="/mutate"}`:     4,
		`aclc_webhook_request_duration_seconds_count{path="/validate"}`:              2,
		`aclc_webhook_request_duration_seconds_bucket{le="+Inf",path="/validate"}`:   2,
		`aclc_webhook_request_duration_seconds_bucket{le="0.0001",path="/validate"}`: m[`aclc_webhook_request_duration_seconds_bucket{le="0.0001",path="/validate"}`],
	}
	for k, v := range want {
		got, ok := m[k]
		if !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// Buckets are cumulative.
	prev := -1.0
	for _, le := range opsmetrics.DurationBuckets {
		v := m[`aclc_webhook_request_duration_seconds_bucket{le="`+strconv.FormatFloat(le, 'g', -1, 64)+`",path="/mutate"}`]
		if v < prev {
			t.Errorf("bucket le=%v is %v, below the previous %v", le, v, prev)
		}
		prev = v
	}
	if m[`aclc_webhook_request_duration_seconds_sum{path="/mutate"}`] <= 0 {
		t.Errorf("duration sum not positive")
	}
	// The Go runtime and the process are in the same scrape.
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s missing from /metrics", name)
		}
	}
}

// TestDecisionLogsOptIn: a review answered is logged only with
// WithDecisionLogs, as OPA's console decision logs are opt-in.
func TestDecisionLogsOptIn(t *testing.T) {
	for _, on := range []bool{false, true} {
		var buf bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, nil))
		srv := New(&fakeEngine{}, NewConfig().WithLogger(log).WithDecisionLogs(on))
		req := httptest.NewRequest("POST", "/mutate", strings.NewReader(podReview))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		lines := strings.Count(buf.String(), `"msg":"Decision Log"`)
		if want := map[bool]int{false: 0, true: 1}[on]; lines != want || on && !strings.Contains(buf.String(), `"uid":"u-1"`) {
			t.Errorf("decision logs %v: %d decision lines, want %d:\n%s", on, lines, want, buf.String())
		}
	}
}

// TestUndecodableBodyStopsTheDecision: the decision starts beside the
// typed decoding; a body that does not decode is answered as YuniKorn
// answers it, without waiting for the engine, whose evaluation is
// cancelled.
func TestUndecodableBodyStopsTheDecision(t *testing.T) {
	cancelled := make(chan struct{})
	eng := &fakeEngine{answer: func(ctx context.Context, in []byte) (json.RawMessage, error) {
		<-ctx.Done() // an engine that never answers by itself
		close(cancelled)
		return nil, ctx.Err()
	}}
	srv := New(eng, NewConfig().WithLogger(discard))
	req := httptest.NewRequest("POST", "/mutate", strings.NewReader(`{"request":"not an object"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != invalidBodyAnswer {
		t.Fatalf("got %d %s, want 200 %s", rec.Code, rec.Body, invalidBodyAnswer)
	}
	select {
	case <-cancelled:
	case <-time.After(time.Minute): // a generous ceiling: it is cancelled before the answer
		t.Fatal("the engine's evaluation was not cancelled")
	}
}
