package webhook

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeMetrics: the metrics listener answers GET /metrics in plain
// HTTP, the same counters as the HTTPS port, and nothing else: no review,
// no probe, no write; it stops with its context.
func TestServeMetrics(t *testing.T) {
	srv := New(&fakeEngine{}, NewConfig().WithLogger(discard))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeMetrics(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	for _, tt := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/metrics", http.StatusOK, "aclc_webhook_"},
		{"HEAD", "/metrics", http.StatusOK, ""},
		{"POST", "/metrics", http.StatusMethodNotAllowed, ""},
		{"POST", "/mutate", http.StatusNotFound, ""},
		{"POST", "/validate", http.StatusNotFound, ""},
		{"GET", "/readyz", http.StatusNotFound, ""},
		{"GET", "/healthz", http.StatusNotFound, ""},
		{"GET", "/", http.StatusNotFound, ""},
	} {
		req, _ := http.NewRequest(tt.method, url+tt.path, strings.NewReader(podReview))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.body) {
			t.Errorf("%s %s: %d %.80q, want %d with %q", tt.method, tt.path, resp.StatusCode, b, tt.code, tt.body)
		}
	}
	if got := get(t, srv.Handler(), "GET", "/metrics").Body.String(); !strings.Contains(got, `aclc_webhook_requests_total`) {
		t.Errorf("the HTTPS handler's /metrics lost the counters: %.200s", got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeMetrics = %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeMetrics did not return after cancel")
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the metrics listener still accepts after cancel")
	}
}
