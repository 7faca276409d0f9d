package webhook

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/opsmetrics"
)

// TestReadyzSaysWhenStale pins that a webhook whose sources are out of
// sight (a cluster watch that lost the API server) stays ready, serving
// the configuration it read, and that /readyz and /metrics say since when
// and why, in a few words; a failed reload is said beside it.
func TestReadyzSaysWhenStale(t *testing.T) {
	var mu sync.Mutex
	var health opsmetrics.SourceHealth
	set := func(h opsmetrics.SourceHealth) { mu.Lock(); health = h; mu.Unlock() }
	srv := New(&fakeEngine{}, NewConfig().WithLogger(discard).WithSourceHealth(func() opsmetrics.SourceHealth {
		mu.Lock()
		defer mu.Unlock()
		return health
	}))
	if err := srv.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	since := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	steps := []struct {
		name    string
		health  opsmetrics.SourceHealth
		reload  error
		readyz  string
		metrics []string
	}{
		{"in sight", opsmetrics.SourceHealth{}, nil, "ok\n", []string{"aclc_webhook_source_watch_errors_total 0\n", "aclc_webhook_source_last_watch_error_timestamp_seconds 0\n"}},
		{"out of sight", opsmetrics.SourceHealth{StaleSince: since, Reason: "watch Namespaces: API server unreachable", Errors: 3, LastError: since.Add(time.Second)},
			nil, "ok; configuration stale since 2026-01-02T15:04:05Z: watch Namespaces: API server unreachable\n",
			[]string{"aclc_webhook_source_watch_errors_total 3\n", "aclc_webhook_source_synced_timestamp_seconds 1.767366245e+09\n",
				"aclc_webhook_source_last_watch_error_timestamp_seconds 1.767366246e+09\n"}},
		{"a long reason is cut", opsmetrics.SourceHealth{StaleSince: since, Reason: strings.Repeat("x", 500)},
			nil, "ok; configuration stale since 2026-01-02T15:04:05Z: " + strings.Repeat("x", 120) + "...\n", nil},
		{"out of sight and a failed reload", opsmetrics.SourceHealth{StaleSince: since, Reason: "list Namespaces: forbidden"},
			errors.New("bad queues.yaml"), "ok; configuration stale since 2026-01-02T15:04:05Z: list Namespaces: forbidden; serving the last good configuration: the last reload failed: bad queues.yaml\n", nil},
	}
	for _, st := range steps {
		set(st.health)
		if st.reload != nil {
			srv.Reloaded(nil, st.reload)
		}
		rec := get(t, h, "GET", "/readyz")
		if rec.Code != 200 || rec.Body.String() != st.readyz {
			t.Errorf("%s: /readyz %d %q, want 200 %q", st.name, rec.Code, rec.Body, st.readyz)
		}
		m := get(t, h, "GET", "/metrics").Body.String()
		for _, want := range st.metrics {
			if !strings.Contains(m, want) {
				t.Errorf("%s: /metrics lacks %q", st.name, want)
			}
		}
	}
}
