package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// serveResult is the "aclc serve vs stock opa run" section.
type serveResult struct {
	requests             int
	opa, aclc            latency
	reloads              int // source rewrites, each waited for until served
	reloadWorkers        int
	reloadRequests       int64
	reloadFailed         int64
	reloadMedian, reload time.Duration // time from a rewrite to the new bundle in service: median, max
	reloadElapsed        time.Duration
}

type latency struct{ median, p99 time.Duration }

// serveRun compares aclc serve (the bin/aclc binary) with stock opa run on
// the same static-groups Rego bundle, one keep-alive client each, then
// rewrites a source under load and counts failed requests.
func serveRun(ctx context.Context, aclcBin, opaBin string, n, reloads, workers int) serveResult {
	dir, err := os.MkdirTemp("", "aclc-bench-serve-")
	check(err)
	defer os.RemoveAll(dir)
	seed, err := os.ReadFile("examples/yunikorn/acl-doc.yaml")
	check(err)
	src := filepath.Join(dir, "queues.yaml")
	check(os.WriteFile(src, seed, 0o644))
	s, err := translate.LoadSources([]string{src}, translate.KindAuto)
	check(err)
	s, err = s.WithGroupResolution("", true)
	check(err)
	// Every YuniKorn configuration carries the admission decision too; stock
	// OPA runs it only with the admission decoding in plain Rego.
	s = s.WithPlainDecoding()
	b, err := translate.RegoBundle(s)
	check(err)
	raw, err := translate.BundleBytes(b)
	check(err)
	bundlePath := filepath.Join(dir, "bundle.tar.gz")
	check(os.WriteFile(bundlePath, raw, 0o644))

	input := []byte(`{"input":{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}}`)
	want := []byte(`"allow":true`)
	res := serveResult{requests: n, reloads: reloads, reloadWorkers: workers}

	addr := freeAddr()
	opa := exec.CommandContext(ctx, opaBin, "run", "--server", "--addr", addr, "--log-level", "error", "--skip-version-check", bundlePath)
	opa.Stderr = os.Stderr
	check(opa.Start())
	url := "http://" + addr
	waitHealthy(url)
	res.opa = sequential(url, input, want, n)
	_ = opa.Process.Signal(os.Interrupt)
	_ = opa.Wait()

	srv := exec.CommandContext(ctx, aclcBin, "serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--reload-interval", "0", "--bundle", bundlePath)
	out, err := srv.StdoutPipe()
	check(err)
	srv.Stderr = os.Stderr
	check(srv.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	check(err)
	m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(line)
	if m == nil {
		check(fmt.Errorf("aclc serve: %q", line))
	}
	waitHealthy(m[1])
	res.aclc = sequential(m[1], input, want, n)
	_ = srv.Process.Signal(os.Interrupt)
	_ = srv.Wait()

	reloadRun(ctx, src, seed, input, &res)
	return res
}

// reloadRun serves the source in-process, sends requests from `workers`
// keep-alive clients while the source is rewritten `reloads` times (each
// rewrite waited for until served), and counts the requests that failed:
// an error, a non-200 answer, or an answer that is neither decision.
func reloadRun(ctx context.Context, src string, seed, input []byte, res *serveResult) {
	// Two versions of the source that decide the input differently.
	other := bytes.Replace(seed, []byte("adminacl: sue dev,test"), []byte("adminacl: sue test"), 1)
	if bytes.Equal(other, seed) {
		check(fmt.Errorf("examples/yunikorn/acl-doc.yaml no longer has the line the reload run edits"))
	}
	srv, err := serve.New(ctx, serve.NewConfig().WithAddr("127.0.0.1:0").WithSources(src).WithResolver("none").WithStaticGroups(true).
		WithLogLevel("error").WithLogOutput(io.Discard).WithReloadInterval(10*time.Millisecond))
	check(err)
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, func(a string) { ready <- a }) }()
	url := "http://" + <-ready + "/v1/data/yunikorn/queues/decision"
	defer func() { stop(); check(<-done) }()

	var requests, failed atomic.Int64
	var wg sync.WaitGroup
	quit := make(chan struct{})
	for w := 0; w < res.reloadWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for {
				select {
				case <-quit:
					return
				default:
				}
				resp, err := client.Post(url, "application/json", bytes.NewReader(input))
				requests.Add(1)
				if err != nil {
					failed.Add(1)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK ||
					!(bytes.Contains(body, []byte(`"allow":true`)) || bytes.Contains(body, []byte(`"allow":false`))) {
					failed.Add(1)
				}
			}
		}()
	}
	var took []time.Duration
	start := time.Now()
	for i := 0; i < res.reloads; i++ {
		content := other
		if i%2 == 1 {
			content = seed
		}
		t0 := time.Now()
		check(translate.WriteFileAtomic(src, content))
		for srv.Reloads() < int64(i+1) {
			if time.Since(t0) > 10*time.Second {
				check(fmt.Errorf("rewrite %d not served after 10s", i+1))
			}
			time.Sleep(time.Millisecond)
		}
		took = append(took, time.Since(t0))
	}
	res.reloadElapsed = time.Since(start)
	close(quit)
	wg.Wait()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	res.reloadRequests, res.reloadFailed = requests.Load(), failed.Load()+srv.FailedReloads()
	res.reloadMedian, res.reload = took[len(took)/2], took[len(took)-1]
}

// sequential sends n requests one after the other on one keep-alive
// connection, after a warm-up, and returns the median and p99 latency.
func sequential(url string, body, want []byte, n int) latency {
	client := &http.Client{Timeout: 10 * time.Second}
	ep := url + "/v1/data/yunikorn/queues/decision"
	post := func() time.Duration {
		t0 := time.Now()
		resp, err := client.Post(ep, "application/json", bytes.NewReader(body))
		check(err)
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		check(err)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, want) {
			check(fmt.Errorf("%s: HTTP %d: %s", url, resp.StatusCode, out))
		}
		return d
	}
	for i := 0; i < 200; i++ {
		post()
	}
	lat := make([]time.Duration, n)
	for i := range lat {
		lat[i] = post()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return latency{median: lat[n/2], p99: lat[n*99/100]}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().String()
}

func waitHealthy(url string) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	check(fmt.Errorf("%s not healthy after 30s", url))
}

func renderServe(r serveResult) string {
	var b strings.Builder
	ratio := float64(r.aclc.median) / float64(r.opa.median)
	fmt.Fprintf(&b, "## aclc serve vs stock opa run\n\nThe same Rego bundle (`examples/yunikorn/acl-doc.yaml`, `--static-groups`), served by `bin/aclc serve --bundle` and by `bin/opa run --server`, both at `--log-level error`; one keep-alive client on loopback sends %d requests one after the other to each (after 200 to warm up): `john` in `dev` administers `root.test`.\n\n", r.requests)
	b.WriteString("| server | median | p99 |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| stock `opa run` | %s | %s |\n| `aclc serve` | %s | %s |\n\n", us(r.opa.median), us(r.opa.p99), us(r.aclc.median), us(r.aclc.p99))
	fmt.Fprintf(&b, "### Reloads under load\n\n`aclc serve` on the source file (checked every 10 ms) while %d keep-alive clients send the same request without pause; the source is rewritten (temp file + rename) %d times, alternating between two versions that decide the request differently, each rewrite waited for until it is served. %d requests in %s; a failure is a transport error, a non-200 answer, an answer that is neither decision, or a reload that did not load. Time from a rewrite to the new bundle in service: median %s, max %s.\n\n",
		r.reloadWorkers, r.reloads, r.reloadRequests, r.reloadElapsed.Round(time.Millisecond), r.reloadMedian.Round(time.Millisecond), r.reload.Round(time.Millisecond))
	b.WriteString("| target | measured | |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| `aclc serve` median ≤ 1.5× stock `opa run` (same bundle, one keep-alive client) | %.2f× | %s |\n", ratio, verdict(ratio <= 1.5))
	fmt.Fprintf(&b, "| no failed request while the source is rewritten %d times | %d failed of %d | %s |\n", r.reloads, r.reloadFailed, r.reloadRequests, verdict(r.reloadFailed == 0))
	return b.String()
}
