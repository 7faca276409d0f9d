package webhook

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// durationBuckets are the upper bounds, in seconds, of the request duration
// histogram: a decision on the Wasm engine takes tens of microseconds, the
// API server gives up after timeoutSeconds (10s by default).
var durationBuckets = [...]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics are the server's counters, written out in the Prometheus text
// format 0.0.4 by hand: the project keeps its dependency graph small.
type metrics struct {
	mu       sync.Mutex
	requests map[requestKey]uint64

	allowed, denied atomic.Uint64
	engineErrors    atomic.Uint64
	panics          atomic.Uint64

	durations map[string]*histogram // by admission path

	reloads, reloadFailures atomic.Uint64
	lastReload              atomic.Int64 // Unix seconds of the last good load
	reloadErr               atomic.Pointer[string]
}

func (m *metrics) reloaded() {
	m.reloads.Add(1)
	m.lastReload.Store(time.Now().Unix())
	m.reloadErr.Store(nil)
}

func (m *metrics) reloadFailed(err error) {
	m.reloadFailures.Add(1)
	msg := err.Error()
	m.reloadErr.Store(&msg)
}

func (m *metrics) lastReloadError() string {
	if p := m.reloadErr.Load(); p != nil {
		return *p
	}
	return ""
}

type requestKey struct {
	path string
	code int
}

type histogram struct {
	counts [len(durationBuckets) + 1]atomic.Uint64 // the last is the +Inf bucket
	sumNS  atomic.Uint64
}

func newMetrics() *metrics {
	m := &metrics{
		requests:  map[requestKey]uint64{},
		durations: map[string]*histogram{pathMutate: {}, pathValidate: {}, pathValidateQueue: {}},
	}
	m.lastReload.Store(time.Now().Unix()) // the sources loaded at start
	return m
}

// pathLabel keeps the path label's values few: any path that is not served
// is "other", so scanners cannot grow the series without bound.
func pathLabel(p string) string {
	switch p {
	case pathMutate, pathValidate, pathValidateQueue, pathHealthz, pathReadyz, pathMetrics:
		return p
	}
	return "other"
}

func (m *metrics) request(path string, code int, d time.Duration) {
	path = pathLabel(path)
	m.mu.Lock()
	m.requests[requestKey{path, code}]++
	m.mu.Unlock()
	if h := m.durations[path]; h != nil {
		h.observe(d)
	}
}

func (m *metrics) decision(allowed bool) {
	if allowed {
		m.allowed.Add(1)
	} else {
		m.denied.Add(1)
	}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i, _ := slices.BinarySearch(durationBuckets[:], s) // the first bound ≥ s; le is inclusive
	h.counts[i].Add(1)
	h.sumNS.Add(uint64(max(d, 0)))
}

// write renders every metric; series within a metric are sorted so the
// output is stable.
func (m *metrics) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m.mu.Lock()
	keys := make([]requestKey, 0, len(m.requests))
	counts := make(map[requestKey]uint64, len(m.requests))
	for k, v := range m.requests {
		keys = append(keys, k)
		counts[k] = v
	}
	m.mu.Unlock()
	slices.SortFunc(keys, func(a, b requestKey) int {
		if a.path != b.path {
			if a.path < b.path {
				return -1
			}
			return 1
		}
		return a.code - b.code
	})

	bw.WriteString("# HELP aclc_webhook_requests_total HTTP requests answered, by path (\"other\" for any path not served) and status code.\n")
	bw.WriteString("# TYPE aclc_webhook_requests_total counter\n")
	for _, k := range keys {
		bw.WriteString(`aclc_webhook_requests_total{path="` + k.path + `",code="` + strconv.Itoa(k.code) + `"} `)
		bw.WriteString(strconv.FormatUint(counts[k], 10) + "\n")
	}

	bw.WriteString("# HELP aclc_webhook_decisions_total AdmissionReviews answered, by the answer's allowed field (denials include bodies that do not decode and engine errors).\n")
	bw.WriteString("# TYPE aclc_webhook_decisions_total counter\n")
	bw.WriteString(`aclc_webhook_decisions_total{allowed="false"} ` + strconv.FormatUint(m.denied.Load(), 10) + "\n")
	bw.WriteString(`aclc_webhook_decisions_total{allowed="true"} ` + strconv.FormatUint(m.allowed.Load(), 10) + "\n")

	bw.WriteString("# HELP aclc_webhook_request_duration_seconds Time to answer an admission request, from the request's headers to the written answer.\n")
	bw.WriteString("# TYPE aclc_webhook_request_duration_seconds histogram\n")
	for _, path := range []string{pathMutate, pathValidate, pathValidateQueue} {
		h := m.durations[path]
		var cum uint64
		for i := range h.counts {
			cum += h.counts[i].Load()
			le := "+Inf"
			if i < len(durationBuckets) {
				le = strconv.FormatFloat(durationBuckets[i], 'g', -1, 64)
			}
			bw.WriteString(`aclc_webhook_request_duration_seconds_bucket{path="` + path + `",le="` + le + `"} ` + strconv.FormatUint(cum, 10) + "\n")
		}
		sum := float64(h.sumNS.Load()) / float64(time.Second)
		bw.WriteString(`aclc_webhook_request_duration_seconds_sum{path="` + path + `"} ` + formatFloat(sum) + "\n")
		bw.WriteString(`aclc_webhook_request_duration_seconds_count{path="` + path + `"} ` + strconv.FormatUint(cum, 10) + "\n")
	}

	bw.WriteString("# HELP aclc_webhook_reloads_total Changes of the sources loaded and put in service.\n")
	bw.WriteString("# TYPE aclc_webhook_reloads_total counter\n")
	bw.WriteString("aclc_webhook_reloads_total " + strconv.FormatUint(m.reloads.Load(), 10) + "\n")
	bw.WriteString("# HELP aclc_webhook_reload_failures_total Changes of the sources that did not load; the last good configuration stayed in service.\n")
	bw.WriteString("# TYPE aclc_webhook_reload_failures_total counter\n")
	bw.WriteString("aclc_webhook_reload_failures_total " + strconv.FormatUint(m.reloadFailures.Load(), 10) + "\n")
	bw.WriteString("# HELP aclc_webhook_last_reload_success_timestamp_seconds When the configuration in service was loaded (Unix time).\n")
	bw.WriteString("# TYPE aclc_webhook_last_reload_success_timestamp_seconds gauge\n")
	bw.WriteString("aclc_webhook_last_reload_success_timestamp_seconds " + strconv.FormatInt(m.lastReload.Load(), 10) + "\n")
	bw.WriteString("# HELP aclc_webhook_last_reload_failed 1 when the last change of the sources did not load.\n")
	bw.WriteString("# TYPE aclc_webhook_last_reload_failed gauge\n")
	failed := "0"
	if m.lastReloadError() != "" {
		failed = "1"
	}
	bw.WriteString("aclc_webhook_last_reload_failed " + failed + "\n")

	bw.WriteString("# HELP aclc_webhook_engine_errors_total Decisions the engine could not make; each was answered with a denial.\n")
	bw.WriteString("# TYPE aclc_webhook_engine_errors_total counter\n")
	bw.WriteString("aclc_webhook_engine_errors_total " + strconv.FormatUint(m.engineErrors.Load(), 10) + "\n")

	bw.WriteString("# HELP aclc_webhook_panics_total Handler panics recovered (each answered 500).\n")
	bw.WriteString("# TYPE aclc_webhook_panics_total counter\n")
	bw.WriteString("aclc_webhook_panics_total " + strconv.FormatUint(m.panics.Load(), 10) + "\n")
	return bw.Flush()
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
