// Package opsmetrics holds the Prometheus metrics of aclc's servers:
// requests by path and status code, decisions and engine errors by path,
// latency histograms, and the reloads of the sources they serve.
//
// # Notes
//
// A server that runs alone (aclc webhook) registers them on its own
// registry with the Go and process collectors (NewRegistry); aclc serve
// registers them on OPA's registry, which has those collectors already, so
// one scrape shows OPA's metrics and aclc's without a duplicate. Path
// labels must come from a fixed set (the caller maps anything else to
// "other"), so that scanners cannot grow the series without bound.
package opsmetrics

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aclc-dev/aclc/internal/text"
)

// DurationBuckets are the upper bounds, in seconds, of the latency
// histograms: a decision on the Wasm engine takes tens of microseconds, the
// API server gives up on a webhook after timeoutSeconds (10s by default).
var DurationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics are one server's metrics, named aclc_<subsystem>_*. Its methods
// are safe for concurrent use.
type Metrics struct {
	requests         *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	decisions        *prometheus.CounterVec
	engineErrors     *prometheus.CounterVec
	panics           prometheus.Counter
	reloads          prometheus.Counter
	reloadFailures   prometheus.Counter
	lastReload       prometheus.Gauge
	lastReloadFailed prometheus.Gauge
	lastErr          atomic.Pointer[string]
	source           atomic.Pointer[func() SourceHealth]
}

// SourceHealth says whether a server still sees the sources it follows (a
// cluster's API server). While it does not, it serves the configuration
// it last read: stale since StaleSince.
type SourceHealth struct {
	// StaleSince is when the server lost sight of its sources; zero while
	// it sees them.
	StaleSince time.Time
	// Reason says what failed in a few words, never the error's details
	// (those go to the log).
	Reason string
	// Errors counts the failures to read or watch the sources since the
	// start; LastError is when the last was (zero: none yet).
	Errors    int64
	LastError time.Time
}

// ReadyLine is the clause /readyz adds for stale sources, "" when they
// are not: "configuration stale since 2026-01-02T15:04:05Z: watch
// Namespaces: API server unreachable".
func (h SourceHealth) ReadyLine() string {
	if h.StaleSince.IsZero() {
		return ""
	}
	reason := h.Reason
	if len(reason) > maxReason {
		reason = reason[:maxReason] + "..."
	}
	return "configuration stale since " + h.StaleSince.UTC().Format(time.RFC3339) + ": " + reason
}

// maxReason bounds the reason /readyz shows: a probe's answer is no place
// for an error's details.
const maxReason = 120

// NewRegistry returns a registry with the Go runtime and process
// collectors, for a server that is not OPA's.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// New makes the metrics of subsystem ("webhook", "serve") and registers
// them on reg. The last good load is taken to be now: a server starts on
// sources that loaded.
func New(reg prometheus.Registerer, subsystem string) (*Metrics, error) {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "aclc", Subsystem: subsystem, Name: name, Help: help}
	}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts(opts("requests_total",
			`HTTP requests answered, by path ("other" for any path not served) and status code.`)), []string{"path", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "aclc", Subsystem: subsystem, Name: "request_duration_seconds",
			Help: "Time to answer a request, from its headers to the written answer, by path.", Buckets: DurationBuckets}, []string{"path"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts(opts("decisions_total",
			"Decisions answered, by path and whether they allow (denials include bodies that do not decode and engine errors).")), []string{"path", "allowed"}),
		engineErrors: prometheus.NewCounterVec(prometheus.CounterOpts(opts("engine_errors_total",
			"Decisions the engine could not make, by path; each was answered with a denial.")), []string{"path"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts(opts("panics_total",
			"Handler panics recovered (each answered 500)."))),
		reloads: prometheus.NewCounter(prometheus.CounterOpts(opts("reloads_total",
			"Changes of the sources loaded and put in service."))),
		reloadFailures: prometheus.NewCounter(prometheus.CounterOpts(opts("reload_failures_total",
			"Changes of the sources that did not load; the last good configuration stayed in service."))),
		lastReload: prometheus.NewGauge(prometheus.GaugeOpts(opts("last_reload_success_timestamp_seconds",
			"When the configuration in service was loaded (Unix time)."))),
		lastReloadFailed: prometheus.NewGauge(prometheus.GaugeOpts(opts("last_reload_failed",
			"1 when the last change of the sources did not load."))),
	}
	synced := prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("source_synced_timestamp_seconds",
		"When the configuration in service was last known to match its sources (Unix time): now while a "+
			"cluster watch sees the API server (and always for files), else when it lost it. "+
			"time() minus this is the staleness of the configuration in service.")), func() float64 {
		h := m.SourceHealth()
		if h.StaleSince.IsZero() {
			return float64(time.Now().UnixNano()) / 1e9
		}
		return float64(h.StaleSince.UnixNano()) / 1e9
	})
	watchErrors := prometheus.NewCounterFunc(prometheus.CounterOpts(opts("source_watch_errors_total",
		"Failed lists and watches of the cluster's sources (each retry counts).")), func() float64 {
		return float64(m.SourceHealth().Errors)
	})
	lastWatchErr := prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("source_last_watch_error_timestamp_seconds",
		"When a list or watch of the cluster's sources last failed (Unix time; 0: never).")), func() float64 {
		h := m.SourceHealth()
		if h.LastError.IsZero() {
			return 0
		}
		return float64(h.LastError.UnixNano()) / 1e9
	})
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.decisions, m.engineErrors, m.panics,
		m.reloads, m.reloadFailures, m.lastReload, m.lastReloadFailed, synced, watchErrors, lastWatchErr} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.lastReload.SetToCurrentTime()
	return m, nil
}

// Request counts an answered request and its latency.
func (m *Metrics) Request(path string, code int, d time.Duration) {
	m.requests.WithLabelValues(path, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(path).Observe(d.Seconds())
}

// Decision counts a decision answered on path.
func (m *Metrics) Decision(path string, allowed bool) {
	m.decisions.WithLabelValues(path, strconv.FormatBool(allowed)).Inc()
}

// EngineError counts a decision the engine could not make on path.
func (m *Metrics) EngineError(path string) { m.engineErrors.WithLabelValues(path).Inc() }

// Panic counts a recovered handler panic.
func (m *Metrics) Panic() { m.panics.Inc() }

// Reloaded records a change of the sources put in service.
func (m *Metrics) Reloaded() {
	m.reloads.Inc()
	m.lastReload.SetToCurrentTime()
	m.lastReloadFailed.Set(0)
	m.lastErr.Store(nil)
}

// Unchanged records a change of the sources that gives the configuration
// in service again: a failure before it is over, and nothing is reloaded.
func (m *Metrics) Unchanged() {
	m.lastReloadFailed.Set(0)
	m.lastErr.Store(nil)
}

// ReloadFailed records a change of the sources that did not load.
func (m *Metrics) ReloadFailed(err error) {
	m.reloadFailures.Inc()
	m.lastReloadFailed.Set(1)
	msg := err.Error()
	m.lastErr.Store(&msg)
}

// FollowSource makes health the source of the source_* metrics and of
// SourceHealth; without it the sources count as always in sight.
func (m *Metrics) FollowSource(health func() SourceHealth) {
	if health == nil {
		m.source.Store(nil)
		return
	}
	m.source.Store(&health)
}

// SourceHealth is the sources' health, as FollowSource gives it.
func (m *Metrics) SourceHealth() SourceHealth {
	if f := m.source.Load(); f != nil {
		return (*f)()
	}
	return SourceHealth{}
}

// ReadyBody is the body of a /readyz that answers 200: "ok", then what
// is served that is not what the sources say, as short clauses: stale
// sources (since when, and why in a few words) and a reload that failed.
func (m *Metrics) ReadyBody(what string) string {
	msg := "ok"
	if line := m.SourceHealth().ReadyLine(); line != "" {
		msg += "; " + text.OneLine(line)
	}
	if e := m.LastReloadError(); e != "" {
		msg += "; serving the last good " + what + ": the last reload failed: " + text.OneLine(e)
	}
	return msg + "\n"
}

// LastReloadError is the error of the last reload when it failed, else "".
func (m *Metrics) LastReloadError() string {
	if p := m.lastErr.Load(); p != nil {
		return *p
	}
	return ""
}

// Handler serves the registry's metrics in Prometheus' text format.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}
