package webhook

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkWebhookTLS measures the whole path the API server takes: HTTPS
// over keep-alive connections, YuniKorn's body rules, the real Wasm engine,
// the answer. Run it on its own, it is a load test, not a unit test:
//
//	go test -run xxx -bench WebhookTLS -benchtime 3s ./pkg/webhook/
//
// It reports requests per second across all clients and the latency
// percentiles one client sees.
func BenchmarkWebhookTLS(b *testing.B) {
	r := startTLS(b, wasmEngine(b), NewConfig().WithLogger(discard))
	body := review(b, "bench", "alice", []string{"devs"}, samplePod(map[string]string{"team": "a"}))
	if resp, out := r.post(b, "/mutate", body); resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"allowed":true`)) || !bytes.Contains(out, []byte(`"patch"`)) {
		b.Fatalf("warm-up answer: %d %s", resp.StatusCode, out)
	}

	var mu sync.Mutex
	var all []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		lat := make([]time.Duration, 0, 4096)
		for pb.Next() {
			t0 := time.Now()
			req, _ := http.NewRequest(http.MethodPost, r.url+"/mutate", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := r.client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Errorf("status %d, %v", resp.StatusCode, err)
				return
			}
			lat = append(lat, time.Since(t0))
		}
		mu.Lock()
		all = append(all, lat...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(float64(len(all))*p))].Microseconds())
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
