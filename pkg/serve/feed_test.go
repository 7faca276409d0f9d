package serve

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// memFeed is a Feed over a queues.yaml in memory; set changes it,
// reports the change and returns once the server has dealt with it.
type memFeed struct {
	mu      sync.Mutex
	text    string
	changes chan chan struct{}
}

func (f *memFeed) Load() (*translate.Sources, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &translate.Sources{}
	if err := s.Add("mem/queues.yaml", []byte(f.text), translate.KindAuto); err != nil {
		return nil, err
	}
	return s, nil
}

func (f *memFeed) Run(ctx context.Context, _ time.Duration, changed func() error) {
	for {
		select {
		case <-ctx.Done():
			return
		case done := <-f.changes:
			_ = changed()
			close(done)
		}
	}
}

func (f *memFeed) set(text string) {
	f.mu.Lock()
	f.text = text
	f.mu.Unlock()
	done := make(chan struct{})
	f.changes <- done
	<-done
}

// TestFeedReloadFailureIsVisible pins that a change from a feed is served
// without a restart, that one that does not build keeps the last good
// bundle and shows in /readyz and /metrics, and that a good one clears it.
func TestFeedReloadFailureIsVisible(t *testing.T) {
	feed := &memFeed{text: queues, changes: make(chan chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, NewConfig().WithAddr("127.0.0.1:0").WithFeed(feed).WithLogOutput(io.Discard).WithLogLevel("error"))
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
	allowed := func() bool {
		t.Helper()
		resp, err := http.Post(base+"/v1/data/yunikorn/queues/decision", "application/json",
			bytes.NewReader([]byte(`{"input":{"queue":"root.test","action":"admin","user":"ann","groups":["dev"]}}`)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `"allow":true`)
	}
	steps := []struct {
		name      string
		text      string
		allow     bool
		readyz    string
		failedGge string
	}{
		{"a good change is served", strings.Replace(queues, "sue dev", "sue ops", 1), false, "ok\n", "aclc_serve_last_reload_failed 0"},
		{"a broken change keeps the last good bundle", queues + "  bogus: [", false, "ok; serving the last good bundle: the last reload failed: ", "aclc_serve_last_reload_failed 1"},
		{"a good change clears the failure", queues, true, "ok\n", "aclc_serve_last_reload_failed 0"},
	}
	if !allowed() {
		t.Fatal("the first bundle does not allow ann")
	}
	for _, st := range steps {
		feed.set(st.text)
		if got := allowed(); got != st.allow {
			t.Errorf("%s: allow %v, want %v", st.name, got, st.allow)
		}
		if got := get("/readyz"); !strings.HasPrefix(got, st.readyz) {
			t.Errorf("%s: /readyz %q, want %q", st.name, got, st.readyz)
		}
		if got := get("/metrics"); !strings.Contains(got, st.failedGge) {
			t.Errorf("%s: /metrics lacks %q", st.name, st.failedGge)
		}
	}
	if srv.FailedReloads() != 1 {
		t.Errorf("%d failed reloads, want 1", srv.FailedReloads())
	}
}
