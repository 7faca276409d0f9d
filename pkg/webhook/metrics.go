package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aclc-dev/aclc/pkg/opsmetrics"
)

// metrics are the server's Prometheus metrics (aclc_webhook_*, see
// docs/OPERATIONS.md) on a registry of its own, with the Go runtime and
// process collectors.
type metrics struct {
	*opsmetrics.Metrics
	reg *prometheus.Registry
}

func newMetrics() *metrics {
	reg := opsmetrics.NewRegistry()
	m, err := opsmetrics.New(reg, "webhook")
	if err != nil {
		// A fresh registry holds nothing these could collide with.
		panic(err)
	}
	return &metrics{Metrics: m, reg: reg}
}

// pathLabel keeps the path label's values few: any path that is not served
// is "other", so scanners cannot grow the series without bound.
func pathLabel(p string) string {
	switch {
	case entrypoints[p] != "", p == pathHealthz, p == pathReadyz, p == pathMetrics, p == pathValidateConfig:
		return p
	}
	return "other"
}

func (m *metrics) request(path string, code int, d time.Duration) {
	m.Request(pathLabel(path), code, d)
}

func (m *metrics) decision(path string, allowed bool) { m.Decision(pathLabel(path), allowed) }

func (m *metrics) engineError(path string) { m.EngineError(pathLabel(path)) }

func (m *metrics) handler() http.Handler { return opsmetrics.Handler(m.reg) }
