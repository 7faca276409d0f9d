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
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

type loadResult struct {
	workers        int
	duration       time.Duration
	requests       int64
	errors         int64
	rps            float64
	p50, p99, pMax time.Duration
}

// webhookLoad runs aclc's webhook with the wasm engine on loopback and
// sends the review from `workers` keep-alive TLS clients for a bounded
// time; every answer must be HTTP 200 with the engine's decision.
func webhookLoad(ctx context.Context, eng engine.Engine, review []byte, workers int, d time.Duration) loadResult {
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
	url := "https://" + ln.Addr().String() + "/mutate"
	post := func() (time.Duration, error) {
		t0 := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(review))
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"allowed":true`))) {
			err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		return time.Since(t0), err
	}
	for i := 0; i < 200; i++ { // warm up connections and the pool
		if _, err := post(); err != nil {
			check(err)
		}
	}
	var n, errs atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				dur, err := post()
				n.Add(1)
				if err != nil {
					errs.Add(1)
					fmt.Fprintln(os.Stderr, "webhook load:", err)
					continue
				}
				mine = append(mine, dur)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r := loadResult{workers: workers, duration: elapsed, requests: n.Load(), errors: errs.Load()}
	r.rps = float64(r.requests) / elapsed.Seconds()
	if len(lat) > 0 {
		r.p50, r.p99, r.pMax = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return r
}
