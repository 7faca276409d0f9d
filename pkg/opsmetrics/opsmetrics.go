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
}

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
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.decisions, m.engineErrors, m.panics,
		m.reloads, m.reloadFailures, m.lastReload, m.lastReloadFailed} {
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
