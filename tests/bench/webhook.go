package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

type loadResult struct {
	workers        int
	duration       time.Duration
	requests       int64
	errors         int64
	rps            float64
	p50, p99, pMax time.Duration
	// paths are the figures of each path of a mixed run, in the order of
	// its reviews.
	paths []pathResult
	// mixed is the run that alternates /mutate and /validate-queue on one
	// server; nil in the runs it is part of.
	mixed *loadResult
}

type pathResult struct {
	path           string
	requests       int64
	p50, p99, pMax time.Duration
}

// loadReview is one request of a load run: the path it is posted to and
// its body. Every answer must allow.
type loadReview struct {
	path string
	body []byte
}

// The webhook's product target, for either run.
const (
	loadTargetRPS = 3000
	loadTargetP99 = 5 * time.Millisecond
)

func (r loadResult) met() bool {
	return r.rps >= loadTargetRPS && r.p99 <= loadTargetP99 && r.errors == 0
}

// webhookLoad runs aclc's webhook with the wasm engine eng on loopback and
// sends review to /mutate from `workers` keep-alive TLS clients for a
// bounded time; then, as the mixed run, the same with the queue example's
// bundle, /mutate and /validate-queue alternating on one server.
func webhookLoad(ctx context.Context, eng engine.Engine, review []byte, workers int, d time.Duration) loadResult {
	r := serveLoad(ctx, eng, []loadReview{{"/mutate", review}}, workers, d)
	fmt.Fprintln(os.Stderr, "webhook load: /mutate and /validate-queue")
	mixed := mixedLoad(ctx, review, workers, d)
	r.mixed = &mixed
	return r
}

// mixedLoad serves the bundle of examples/admission/queue.yaml (its queues
// and namespaces, the admission controller's default settings), which
// answers both entry points, and alternates the user's Pod CREATE on
// /mutate with the queue example's diverted Pod CREATE on /validate-queue.
func mixedLoad(ctx context.Context, mutate []byte, workers int, d time.Duration) loadResult {
	const file = "examples/admission/queue.yaml"
	src, err := os.ReadFile(file)
	check(err)
	queue, err := os.ReadFile("examples/admission/reviews/pod-queue-diverted.json")
	check(err)
	s := &translate.Sources{}
	check(s.Add(file, src, translate.KindAuto))
	eng, err := engine.Open(ctx, engine.Wasm, engine.Target{Sources: s})
	check(err)
	defer eng.Close(ctx)
	return serveLoad(ctx, eng, []loadReview{{"/mutate", mutate}, {"/validate-queue", queue}}, workers, d)
}

// serveLoad runs aclc's webhook with eng on loopback and has `workers`
// keep-alive TLS clients post the reviews in turn for a bounded time; every
// answer must be HTTP 200 and allow.
func serveLoad(ctx context.Context, eng engine.Engine, reviews []loadReview, workers int, d time.Duration) loadResult {
	cert, caPEM, err := webhook.SelfSigned([]string{"127.0.0.1"})
	check(err)
	srv := webhook.New(eng, webhook.NewConfig().WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-done }()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: workers,
	}, Timeout: 10 * time.Second}
	base := "https://" + ln.Addr().String()
	post := func(rv loadReview) (time.Duration, error) {
		t0 := time.Now()
		resp, err := client.Post(base+rv.path, "application/json", bytes.NewReader(rv.body))
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"allowed":true`))) {
			err = fmt.Errorf("%s: HTTP %d: %s", rv.path, resp.StatusCode, body)
		}
		return time.Since(t0), err
	}
	for i := 0; i < 200; i++ { // warm up connections and the pool
		if _, err := post(reviews[i%len(reviews)]); err != nil {
			check(err)
		}
	}
	var n, errs atomic.Int64
	var mu sync.Mutex
	lat := make([][]time.Duration, len(reviews))
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			mine := make([][]time.Duration, len(reviews))
			// Workers start at different reviews, so that the server sees
			// the paths interleaved, not in lockstep.
			for i := w; time.Now().Before(deadline); i++ {
				k := i % len(reviews)
				dur, err := post(reviews[k])
				n.Add(1)
				if err != nil {
					errs.Add(1)
					fmt.Fprintln(os.Stderr, "webhook load:", err)
					continue
				}
				mine[k] = append(mine[k], dur)
			}
			mu.Lock()
			for k := range mine {
				lat[k] = append(lat[k], mine[k]...)
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	r := loadResult{workers: workers, duration: elapsed, requests: n.Load(), errors: errs.Load()}
	r.rps = float64(r.requests) / elapsed.Seconds()
	var all []time.Duration
	for k, l := range lat {
		all = append(all, l...)
		p := pathResult{path: reviews[k].path, requests: int64(len(l))}
		p.p50, p.p99, p.pMax = percentiles(l)
		r.paths = append(r.paths, p)
	}
	r.p50, r.p99, r.pMax = percentiles(all)
	return r
}

// percentiles sorts lat and returns its median, 99th percentile and maximum.
func percentiles(lat []time.Duration) (p50, p99, pMax time.Duration) {
	if len(lat) == 0 {
		return 0, 0, 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
}

// renderMixedLoad is the Markdown section of the mixed run, with its
// figure against the webhook's target.
func renderMixedLoad(load loadResult) string {
	m := load.mixed
	if m == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Webhook load: /mutate and /validate-queue together\n\n"+
		"One `aclc webhook` server (wasm engine) with the bundle of `examples/admission/queue.yaml` answers, alternately, the user's Pod CREATE of the admission scenario on /mutate (the user.info patch) and the queue scenario's diverted Pod CREATE on /validate-queue (a placement and its warning): %d keep-alive TLS clients on loopback for %s, client and server on the same %d CPUs.\n\n",
		m.workers, m.duration.Round(time.Millisecond), runtime.NumCPU())
	b.WriteString("| target | measured | |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| `aclc webhook` serving /mutate and /validate-queue together ≥ %d reviews/s, p99 ≤ %s, zero errors | %.0f/s, p50 %s, p99 %s, max %s, %d errors of %d | %s |\n\n",
		loadTargetRPS, loadTargetP99, m.rps, us(m.p50), us(m.p99), us(m.pMax), m.errors, m.requests, verdict(m.met()))
	b.WriteString("| path | answered | p50 | p99 | max |\n|---|---|---|---|---|\n")
	for _, p := range m.paths {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", p.path, p.requests, us(p.p50), us(p.p99), us(p.pMax))
	}
	fmt.Fprintf(&b, "\nThe /mutate review alone on its own bundle in the same run: %.0f/s, p99 %s.\n", load.rps, us(load.p99))
	return b.String()
}
