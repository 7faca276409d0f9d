package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/opsmetrics"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// clusterFeed is a Feed over a cluster watch, as aclc serve --from-cluster
// has it.
type clusterFeed struct{ w *kube.Watch }

func (f clusterFeed) Load() (*translate.Sources, error) {
	s := &translate.Sources{}
	if err := s.AddLayout(f.w.File()); err != nil {
		return nil, err
	}
	return s, nil
}

func (f clusterFeed) Run(ctx context.Context, _ time.Duration, changed func() error) {
	f.w.Run(ctx, kube.DefaultSettle(), kube.Stamp(f.w.File()), func(*layout.File) error { return changed() })
}

func (f clusterFeed) SourceHealth() opsmetrics.SourceHealth {
	h := f.w.Health()
	return opsmetrics.SourceHealth{StaleSince: h.StaleSince, Reason: h.Reason, Errors: h.Errors, LastError: h.LastError}
}

// outage is a fake API server that can go away: every list and watch is
// then refused, and the open watches end.
type outage struct {
	down     atomic.Bool
	mu       sync.Mutex
	watchers []watch.Interface
}

func newOutage(c *fake.Clientset) *outage {
	o := &outage{}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	c.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		if o.down.Load() {
			return true, nil, refused
		}
		return false, nil, nil
	})
	c.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if o.down.Load() {
			return true, nil, refused
		}
		wi, err := c.Tracker().Watch(a.GetResource(), a.GetNamespace())
		o.mu.Lock()
		o.watchers = append(o.watchers, wi)
		o.mu.Unlock()
		return true, wi, err
	})
	return o
}

func (o *outage) set(down bool) {
	o.down.Store(down)
	if !down {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, wi := range o.watchers {
		wi.Stop()
	}
	o.watchers = nil
}

// TestStaleClusterConfigurationIsVisible pins that a server following a
// cluster whose API server is gone keeps answering with the configuration
// it read, and that /readyz (still 200) and /metrics say since when it is
// stale and why, in a few words; and that both clear when the API server
// is back.
func TestStaleClusterConfigurationIsVisible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: layout.ConfigsName, Namespace: kube.DefaultNamespace},
			Data: map[string]string{"queues.yaml": queues}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	api := newOutage(c)
	w, err := kube.StartWatch(ctx, c, kube.Options{Timeout: 10 * time.Second, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(ctx, NewConfig().WithAddr("127.0.0.1:0").WithFeed(clusterFeed{w}).WithLogOutput(io.Discard).WithLogLevel("error"))
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go srv.Serve(ctx, func(a string) { ready <- a })
	base := "http://" + <-ready
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/readyz"); got != "ok\n" {
		t.Fatalf("/readyz %q before the outage", got)
	}
	lost := time.Now()
	api.set(true)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(get("/readyz"), "stale") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	body := get("/readyz")
	if !strings.HasPrefix(body, "ok; configuration stale since ") || !strings.Contains(body, ": API server unreachable") ||
		strings.Count(body, "\n") != 1 || len(body) > 200 {
		t.Errorf("/readyz during the outage: %q", body)
	}
	if strings.Contains(body, "connection refused") {
		t.Errorf("/readyz carries the error's details: %q", body)
	}
	metrics := get("/metrics")
	if !strings.Contains(metrics, "aclc_serve_source_watch_errors_total") || strings.Contains(metrics, "aclc_serve_source_watch_errors_total 0\n") {
		t.Errorf("/metrics counts no watch error:\n%s", grepLines(metrics, "aclc_serve_source"))
	}
	// Stale since the outage: the timestamp stops at it while time goes on.
	synced := time.Unix(0, int64(metricValue(t, metrics, "aclc_serve_source_synced_timestamp_seconds")*1e9))
	if synced.Before(lost.Add(-time.Second)) || synced.After(lost.Add(15*time.Second)) {
		t.Errorf("synced at %s, lost at %s", synced, lost)
	}
	time.Sleep(1100 * time.Millisecond)
	if again := metricValue(t, get("/metrics"), "aclc_serve_source_synced_timestamp_seconds"); again != metricValue(t, metrics, "aclc_serve_source_synced_timestamp_seconds") {
		t.Errorf("synced moves during the outage: %v then %v", metricValue(t, metrics, "aclc_serve_source_synced_timestamp_seconds"), again)
	}
	// The configuration read before stays in service.
	resp, err := http.Post(base+"/v1/data/yunikorn/queues/decision", "application/json",
		strings.NewReader(`{"input":{"queue":"root.test","action":"admin","user":"ann","groups":["dev"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"allow":true`) {
		t.Errorf("during the outage: %s", b)
	}
	api.set(false)
	deadline = time.Now().Add(40 * time.Second)
	for get("/readyz") != "ok\n" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := get("/readyz"); got != "ok\n" {
		t.Errorf("/readyz %q after the API server is back", got)
	}
	if s := metricValue(t, get("/metrics"), "aclc_serve_source_synced_timestamp_seconds"); time.Since(time.Unix(0, int64(s*1e9))) > 2*time.Second {
		t.Errorf("synced %v after the API server is back", s)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func metricValue(t *testing.T, metrics, name string) float64 {
	t.Helper()
	for _, l := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}
