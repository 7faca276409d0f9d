package opsmetrics_test

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/opsmetrics"
	"github.com/aclc-dev/aclc/pkg/opsmetrics/opsmetricstest"
)

// One registry holds the Go and process collectors and aclc's metrics
// once; registering a second set of the same subsystem is refused rather
// than scraped twice.
func TestMetricsScrape(t *testing.T) {
	reg := opsmetrics.NewRegistry()
	m, err := opsmetrics.New(reg, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opsmetrics.New(reg, "test"); err == nil {
		t.Error("a second registration of the same metrics was accepted")
	}
	m.Request("/a", 200, 3*time.Millisecond)
	m.Decision("/a", true)
	m.Decision("/a", false)
	m.EngineError("/a")
	m.ReloadFailed(errors.New("bad line"))
	if m.LastReloadError() != "bad line" {
		t.Errorf("last error %q", m.LastReloadError())
	}
	rec := httptest.NewRecorder()
	opsmetrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	got, _, err := opsmetricstest.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	for series, want := range map[string]float64{
		`aclc_test_requests_total{code="200",path="/a"}`:                   1,
		`aclc_test_request_duration_seconds_bucket{le="0.0025",path="/a"}`: 0,
		`aclc_test_request_duration_seconds_bucket{le="0.005",path="/a"}`:  1,
		`aclc_test_decisions_total{allowed="true",path="/a"}`:              1,
		`aclc_test_decisions_total{allowed="false",path="/a"}`:             1,
		`aclc_test_engine_errors_total{path="/a"}`:                         1,
		`aclc_test_reload_failures_total`:                                  1,
		`aclc_test_last_reload_failed`:                                     1,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	if got["go_goroutines"] <= 0 || got["process_start_time_seconds"] <= 0 {
		t.Error("no Go or process metrics")
	}
	m.Reloaded()
	if m.LastReloadError() != "" {
		t.Error("a good reload keeps the last error")
	}
}

// /readyz's body is one line, even when the last reload failed with a
// message of several (YuniKorn's queue creation failure has two).
func TestReadyBodyIsOneLine(t *testing.T) {
	m, err := opsmetrics.New(opsmetrics.NewRegistry(), "ready")
	if err != nil {
		t.Fatal(err)
	}
	m.ReloadFailed(errors.New("q.yaml:6:44: configured queue creation failed: \ninvalid quantity"))
	const want = "ok; serving the last good bundle: the last reload failed: q.yaml:6:44: configured queue creation failed: invalid quantity\n"
	if got := m.ReadyBody("bundle"); got != want {
		t.Errorf("ReadyBody = %q, want %q", got, want)
	}
}
