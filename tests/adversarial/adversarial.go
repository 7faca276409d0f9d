// Package adversarial attacks aclc the way a hostile client, a broken
// writer or a damaged download would: load with slowloris connections,
// certificate rotation and reloads under way, hostile inputs on every
// entry point and engine, damaged bundles, concurrent edits, and the cost
// of the largest inputs the API server lets through (cost.go). Each run
// returns what it measured, for the tests (make test, short runs that
// must hold) and for docs/RELIABILITY.md (make reliability, longer runs).
// Servers listen on loopback only, and every loop is bounded in time.
package adversarial

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
	"github.com/aclc-dev/aclc/tests"
	"github.com/aclc-dev/aclc/wasm"
)

// check panics on a failure of the set-up, not of aclc: Run recovers it
// into an error.
func check(err error) {
	if err != nil {
		panic(setupError{err})
	}
}

type setupError struct{ error }

// --- the webhook -------------------------------------------------------

// Phase is one load phase of the webhook run.
type Phase struct {
	Name             string
	Requests, Errors int64
	P50, P99, Max    time.Duration
	Extra            string
	// Attack figures, when the phase had one: slow connections cut by the
	// server (of Attackers), hostile requests answered (of Hostile) and
	// the slowest of them.
	Cut, Attackers    int
	Answered, Hostile int64
	Slowest           time.Duration
}

// WebhookOptions size the webhook run.
type WebhookOptions struct {
	Workers           int
	Phase             time.Duration
	ReadHeaderTimeout time.Duration // 0: the webhook's default
}

// admissionEngines builds the wasm engine on the admission example twice
// (two settings), for the reload phase.
func admissionEngines(ctx context.Context) (engine.Engine, engine.Engine, []byte) {
	src, err := os.ReadFile("examples/admission/configmap.yaml")
	check(err)
	a, err := tests.NewEngineSet(ctx, tests.Single("configmap.yaml", src), "", nil)
	check(err)
	b, err := tests.NewEngineSet(ctx, tests.Single("configmap.yaml", bytes.Replace(src, []byte(`"^yunikorn-submitters$"`), []byte(`"^ops$"`), 1)), "", nil)
	check(err)
	review, err := os.ReadFile("examples/admission/reviews/pod-create-user.json")
	check(err)
	return pick(a, engine.Wasm), pick(b, engine.Wasm), review
}

func pick(s *tests.EngineSet, name string) engine.Engine {
	for _, e := range s.Engines {
		if e.Name() == name {
			return e
		}
	}
	check(fmt.Errorf("no %s engine", name))
	return nil
}

// certFiles writes a self-signed pair as PEM files and returns the CA.
func certFiles(cert, key string) *x509.Certificate {
	c, caPEM, err := webhook.SelfSigned([]string{"127.0.0.1"})
	check(err)
	var certPEM []byte
	for _, der := range c.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	check(err)
	check(os.WriteFile(key+".tmp", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	check(os.WriteFile(cert+".tmp", certPEM, 0o644))
	check(os.Rename(key+".tmp", key))
	check(os.Rename(cert+".tmp", cert))
	block, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(block.Bytes)
	check(err)
	return ca
}

// Webhook runs the webhook in process under load, phase by phase, and
// returns each phase with a Markdown report.
func Webhook(ctx context.Context, o WebhookOptions) (phases []Phase, md string, err error) {
	defer recoverSetup(&err)
	workers, d := o.Workers, o.Phase
	eng, other, review := admissionEngines(ctx)
	dir, err := os.MkdirTemp("", "aclc-reliability-")
	check(err)
	defer os.RemoveAll(dir)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	// The CAs of every certificate the rotation will serve, made up front
	// so that the clients trust them all from the start.
	const rotations = 10
	pool := x509.NewCertPool()
	pool.AddCert(certFiles(certFile, keyFile))
	rotDir := filepath.Join(dir, "rot")
	check(os.Mkdir(rotDir, 0o755))
	for i := range rotations {
		pool.AddCert(certFiles(filepath.Join(rotDir, fmt.Sprintf("%d.crt", i)), filepath.Join(rotDir, fmt.Sprintf("%d.key", i))))
	}
	cfg := webhook.NewConfig().WithTLSFiles(certFile, keyFile).WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if o.ReadHeaderTimeout > 0 {
		cfg = cfg.WithReadHeaderTimeout(o.ReadHeaderTimeout)
	}
	// The reload phase swaps these engines back and forth: none may be
	// closed by a swap while the run still uses it.
	srv := webhook.New(keepOpen{eng}, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-done }()
	addr := ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: workers}, Timeout: 10 * time.Second}
	url := "https://" + addr + "/mutate"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, err := client.Get("https://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			check(fmt.Errorf("the webhook did not get ready"))
		}
	}

	var results []Phase
	run := func(name string, during func(stop <-chan struct{}, p *Phase) string) {
		r := load(client, url, review, workers, d, during)
		r.Name = name
		results = append(results, r)
	}
	run("steady load", nil)
	run("64 slowloris connections at the same time", func(stop <-chan struct{}, p *Phase) string { return slowloris(addr, 64, stop, p) })
	run(fmt.Sprintf("TLS certificate rotated %d times", rotations), func(stop <-chan struct{}, _ *Phase) string {
		for i := range rotations {
			select {
			case <-stop:
				return fmt.Sprintf("%d rotations", i)
			case <-time.After(d / (rotations + 2)):
			}
			for _, ext := range []string{"key", "crt"} { // the key first: the pair is reloaded when both match
				raw, err := os.ReadFile(filepath.Join(rotDir, fmt.Sprintf("%d.%s", i, ext)))
				check(err)
				dst := keyFile
				if ext == "crt" {
					dst = certFile
				}
				check(os.WriteFile(dst+".tmp", raw, 0o600))
				check(os.Rename(dst+".tmp", dst))
			}
		}
		return fmt.Sprintf("%d rotations", rotations)
	})
	run("configuration reloaded 20 times", func(stop <-chan struct{}, _ *Phase) string {
		n := 0
		for i := range 20 {
			select {
			case <-stop:
				return fmt.Sprintf("%d reloads", n)
			case <-time.After(d / 22):
			}
			next := eng
			if i%2 == 0 {
				next = other
			}
			srv.Reloaded(keepOpen{next}, nil)
			n++
		}
		return fmt.Sprintf("%d reloads", n)
	})
	run("8 clients sending 64 KiB annotations of '<' at the same time", func(stop <-chan struct{}, p *Phase) string {
		return hostileLoad(client, url, review, 8, stop, p)
	})

	var b strings.Builder
	fmt.Fprintf(&b, "## The webhook under load and faults\n\n`aclc webhook` in process (wasm engine, TLS from files, `examples/admission/configmap.yaml`), %d keep-alive TLS clients sending a user's Pod CREATE for %s per phase. An error is any answer that is not HTTP 200 with the decision, or a connection that fails.\n\n", workers, d)
	b.WriteString("| phase | requests | errors | p50 | p99 | max | also |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s |\n", r.Name, r.Requests, r.Errors, ms(r.P50), ms(r.P99), ms(r.Max), r.Extra)
	}
	b.WriteString("\n")
	return results, b.String(), nil
}

// recoverSetup turns a failed set-up (check) into the run's error.
func recoverSetup(err *error) {
	if r := recover(); r != nil {
		se, ok := r.(setupError)
		if !ok {
			panic(r)
		}
		*err = se.error
	}
}

// keepOpen keeps the reload phase from closing the engines it swaps back
// in.
type keepOpen struct{ engine.Engine }

func (keepOpen) Close(context.Context) error { return nil }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// load runs the clients for d while during (if any) does its harm.
func load(client *http.Client, url string, review []byte, workers int, d time.Duration, during func(<-chan struct{}, *Phase) string) Phase {
	var n, errs atomic.Int64
	var firstErr atomic.Value
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	stop := make(chan struct{})
	extra := make(chan string, 1)
	var attack Phase
	if during != nil {
		go func() { extra <- during(stop, &attack) }()
	} else {
		extra <- ""
	}
	deadline := time.Now().Add(d)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(review))
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"allowed":true`)) {
						err = fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, body)
					}
				}
				n.Add(1)
				if err != nil {
					if errs.Add(1) == 1 {
						firstErr.Store(err.Error())
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	r := attack
	r.Extra = <-extra
	r.Cut, r.Attackers, r.Answered, r.Hostile, r.Slowest = attack.Cut, attack.Attackers, attack.Answered, attack.Hostile, attack.Slowest
	r.Requests, r.Errors = n.Load(), errs.Load()
	if e, ok := firstErr.Load().(string); ok {
		r.Extra = strings.TrimPrefix(r.Extra+"; first error: "+e, "; ")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		r.P50, r.P99, r.Max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return r
}

// slowloris opens connections that send a header byte every second and
// reports how long the server kept them. An attacker goes on past the end
// of the phase until the server cuts it or slowlorisCap has passed, so a
// connection that got through its handshake late on a busy machine is still
// judged by what the server does with it, not by when the phase ended.
func slowloris(addr string, conns int, stop <-chan struct{}, p *Phase) string {
	var wg sync.WaitGroup
	var longest, cut, dialed atomic.Int64
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // the attacker does not care who answers
			if err != nil {
				return
			}
			defer c.Close()
			dialed.Add(1)
			t0 := time.Now()
			_, _ = c.Write([]byte("POST /mutate HTTP/1.1\r\nHost: x\r\n"))
			for time.Since(t0) < slowlorisCap {
				time.Sleep(time.Second)
				if _, err := c.Write([]byte("X-A: b\r\n")); err != nil {
					break
				}
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
				if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
					break
				}
			}
			if d := time.Since(t0); d < slowlorisCap {
				cut.Add(1)
				if int64(d) > longest.Load() {
					longest.Store(int64(d))
				}
			}
		}()
	}
	<-stop
	wg.Wait()
	p.Cut, p.Attackers = int(cut.Load()), int(dialed.Load())
	msg := fmt.Sprintf("%d of %d slow connections cut by the server, the longest after %.1f s", cut.Load(), dialed.Load(), time.Duration(longest.Load()).Seconds())
	if n := int64(conns) - dialed.Load(); n > 0 {
		msg += fmt.Sprintf("; %d could not connect", n)
	}
	return msg
}

// slowlorisCap is how long a slow connection may stay open before it
// counts as kept by the server: well past any header timeout a test sets.
const slowlorisCap = 15 * time.Second

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// hostileLoad sends reviews whose pod carries a 64 KiB annotation of '<'.
func hostileLoad(client *http.Client, url string, review []byte, clients int, stop <-chan struct{}, p *Phase) string {
	var r map[string]any
	check(json.Unmarshal(review, &r))
	obj := r["request"].(map[string]any)["object"].(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["annotations"] = map[string]any{"note": strings.Repeat("<", 64<<10)}
	body, err := json.Marshal(r)
	check(err)
	var n, ok atomic.Int64
	var slowest atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				n.Add(1)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 {
						ok.Add(1)
					}
				}
				if d := int64(time.Since(t0)); d > slowest.Load() {
					slowest.Store(d)
				}
			}
		}()
	}
	wg.Wait()
	p.Hostile, p.Answered, p.Slowest = n.Load(), ok.Load(), time.Duration(slowest.Load())
	return fmt.Sprintf("%d hostile reviews, %d answered, the slowest in %s", n.Load(), ok.Load(), ms(time.Duration(slowest.Load())))
}

// --- hostile inputs ----------------------------------------------------

type hostileInput struct {
	what  string
	input []byte
}

func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func hostileInputs(ep string) []hostileInput {
	common := []hostileInput{
		{"null", []byte(`null`)},
		{"a string", []byte(`"x"`)},
		{"an array nested 10,000 deep", []byte(nested(10000))},
		{"a number beyond float64", []byte(`1e700`)},
		{"an empty object", []byte(`{}`)},
	}
	switch ep {
	case translate.EntrypointYuniKornQueues:
		return append(common,
			hostileInput{"a 1 MiB user name", []byte(`{"queue":"root.a","action":"submit","user":"` + strings.Repeat("a", 1<<20) + `"}`)},
			hostileInput{"a queue path of 100,000 parts", []byte(`{"queue":"root` + strings.Repeat(".a", 100000) + `","action":"submit","user":"sue"}`)},
			hostileInput{"100,000 groups", []byte(`{"queue":"root.a","action":"submit","user":"sue","groups":[` + strings.TrimSuffix(strings.Repeat(`"g",`, 100000), ",") + `]}`)},
			hostileInput{"invalid UTF-8 in the user", []byte("{\"queue\":\"root.a\",\"action\":\"submit\",\"user\":\"\xff\xfe\"}")},
			hostileInput{"a user with a NUL", []byte(`{"queue":"root.a","action":"submit","user":"su\u0000e"}`)},
			hostileInput{"duplicate keys", []byte(`{"queue":"root.a","action":"submit","user":"eve","user":"sue"}`)},
		)
	case translate.EntrypointAdmissionReview:
		pod := func(annotations string) []byte {
			return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"default","operation":"CREATE","userInfo":{"username":"alice","groups":["devs"]},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":` + annotations + `}}}}`)
		}
		return append(common,
			hostileInput{"a 64 KiB annotation of '<'", pod(`{"note":"` + strings.Repeat("<", 64<<10) + `"}`)},
			hostileInput{"a 64 KiB annotation of '&'", pod(`{"note":"` + strings.Repeat("&", 64<<10) + `"}`)},
			hostileInput{"10,000 annotations", pod(`{` + strings.TrimSuffix(strings.Repeat(`"k":"v",`, 10000), ",") + `}`)},
			hostileInput{"a user.info of 1 MiB", pod(`{"yunikorn.apache.org/user.info":"` + strings.Repeat("x", 1<<20) + `"}`)},
			hostileInput{"a user.info with trailing data", pod(`{"yunikorn.apache.org/user.info":"{\"user\":\"a\"}x"}`)},
			hostileInput{"a user.info of true", pod(`{"yunikorn.apache.org/user.info":"true"}`)},
			hostileInput{"annotations given twice", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"default","operation":"CREATE","userInfo":{"username":"alice","groups":["devs"]},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{},"annotations":{"yunikorn.apache.org/user.info":"{\"user\":\"root\"}"}}}}}`)},
			hostileInput{"an object nested 5,000 deep", pod(`{"x":` + nested(5000) + `}`)},
		)
	default: // VOV
		return append(common,
			hostileInput{"a 1 MiB object name", []byte(`{"object":"` + strings.Repeat("o", 1<<20) + `","action":"VIEW","user":"joe"}`)},
			hostileInput{"100,000 OS groups", []byte(`{"object":"DesignSet","action":"VIEW","user":"joe","osgroups":[` + strings.TrimSuffix(strings.Repeat(`"g",`, 100000), ",") + `]}`)},
			hostileInput{"a host of 1 MiB", []byte(`{"object":"DesignSet","action":"VIEW","user":"joe","host":"` + strings.Repeat("h", 1<<20) + `"}`)},
			hostileInput{"server claimed from afar", []byte(`{"object":"DesignSet","action":"DELEGATE","user":"cadmin","host":"evil","server":true}`)},
		)
	}
}

// HostileRow is what one engine made of the hostile inputs of one entry
// point. FailOpen counts inputs it allowed that the native reference
// denied (or could not decide): the failure that matters.
type HostileRow struct {
	Entrypoint, Engine                         string
	Inputs, Answered, Denied, Failed, FailOpen int
	Slowest                                    time.Duration
}

// Hostile decides every hostile input on every in-process engine, each
// evaluation cut at limit (an evaluation cut counts as failed: a denial).
func Hostile(ctx context.Context, limit time.Duration) (rows []HostileRow, md string, err error) {
	defer recoverSetup(&err)
	var b strings.Builder
	fmt.Fprintf(&b, "## Hostile inputs, per entry point and engine\n\nEach input is decided by every in-process engine. *answered* means a decision object came back (a malformed input is denied with the reason); *failed* means the engine returned an error, which every caller answers as a denial. Nothing may crash or hang: each evaluation is cut after %s.\n\n", limit)
	b.WriteString("| entry point | engine | inputs | answered | denied | failed | allowed where native denies | slowest |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, sc := range []struct{ ep, file string }{
		{translate.EntrypointYuniKornQueues, "examples/yunikorn/acl-doc.yaml"},
		{translate.EntrypointAdmissionReview, "examples/admission/configmap.yaml"},
		{translate.EntrypointVOV, "examples/vov/acls.yaml"},
	} {
		src, err := os.ReadFile(sc.file)
		check(err)
		set, err := tests.NewEngineSet(ctx, tests.Single(sc.file, src), "", nil)
		check(err)
		inputs := hostileInputs(sc.ep)
		nativeAllows := make([]bool, len(inputs))
		for _, e := range set.Engines { // native first: the reference
			row := HostileRow{Entrypoint: sc.ep, Engine: e.Name(), Inputs: len(inputs)}
			for i, in := range inputs {
				ectx, cancel := context.WithTimeout(ctx, limit)
				t0 := time.Now()
				out, err := e.Eval(ectx, sc.ep, in.input)
				cancel()
				row.Slowest = max(row.Slowest, time.Since(t0))
				if err != nil {
					row.Failed++
					continue
				}
				row.Answered++
				allows := bytes.Contains(out, []byte(`"allow":true`)) || bytes.Contains(out, []byte(`"allowed":true`))
				if !allows {
					row.Denied++
				}
				if e.Name() == engine.Native {
					nativeAllows[i] = allows
				} else if allows && !nativeAllows[i] {
					row.FailOpen++
				}
			}
			rows = append(rows, row)
			fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d | %d | %d | %s |\n", sc.ep, e.Name(), row.Inputs, row.Answered, row.Denied, row.Failed, row.FailOpen, ms(row.Slowest))
		}
		set.Close(ctx)
	}
	b.WriteString("\nThe inputs: ")
	var names []string
	for _, ep := range []string{translate.EntrypointYuniKornQueues, translate.EntrypointAdmissionReview, translate.EntrypointVOV} {
		for _, in := range hostileInputs(ep) {
			names = append(names, fmt.Sprintf("%s (`%s`)", in.what, ep))
		}
	}
	b.WriteString(strings.Join(names, "; ") + ".\n\n")
	return rows, b.String(), nil
}

// --- bundles -------------------------------------------------------------

// BundleRow is what the Rego reader and the Wasm host made of one bundle;
// a nil error means it loaded.
type BundleRow struct {
	What             string
	RegoErr, WasmErr error
	WantLoad         bool
}

// Bundles loads damaged and hostile bundles in the Rego reader and the
// Wasm host.
func Bundles(ctx context.Context) (rows []BundleRow, md string, err error) {
	defer recoverSetup(&err)
	src, err := os.ReadFile("examples/yunikorn/acl-doc.yaml")
	check(err)
	// Portable: the Wasm host is given no aclc builtin here.
	s := &translate.Sources{}
	check(s.Add("acl-doc.yaml", src, translate.KindAuto))
	s, err = s.WithGroupResolution("", true)
	check(err)
	s = s.WithPlainDecoding()
	rb, err := translate.RegoBundle(s)
	check(err)
	raw, err := translate.BundleBytes(rb)
	check(err)
	wb, err := translate.WasmBundle(ctx, s)
	check(err)
	wraw, err := translate.BundleBytes(wb)
	check(err)

	verdict := func(err error) string {
		if err != nil {
			return "refused: " + strings.ReplaceAll(firstLine(err.Error()), "|", "\\|")
		}
		return "**loaded**"
	}
	loadRego := func(b []byte) error { _, err := translate.ParseBundle("b.tar.gz", b, nil); return err }
	loadWasm := func(b []byte) error {
		p, err := wasm.Load(ctx, b, wasm.NewConfig())
		if err == nil {
			p.Close(ctx)
		}
		return err
	}
	crc := func(b []byte) []byte { c := bytes.Clone(b); c[len(c)-8] ^= 0xff; return c }
	// A bundle is read into memory, never unpacked: an entry that climbs
	// out of the bundle must neither be written anywhere nor escape the
	// data tree. Both readers take the intact bundle's files with it.
	escape := filepath.Join(os.TempDir(), fmt.Sprintf("aclc-escape-%d", os.Getpid()))
	traversal := tarGz(map[string][]byte{
		"/policy.wasm": extract(wraw, "/policy.wasm"),
		"/data.json":   extract(wraw, "/data.json"),
		"../../../../../../" + strings.TrimPrefix(escape, "/") + "/data.json": []byte(`{"x":1}`),
	})
	bomb := gzipZeros(1<<30 + 1<<20)
	defer os.RemoveAll(escape)
	rows = []BundleRow{
		{"the bundle as built", loadRego(raw), loadWasm(wraw), true},
		{"a byte of the gzip CRC changed", loadRego(crc(raw)), loadWasm(crc(wraw)), false},
		{"a tar entry named ../../../tmp/…/data.json", loadRego(traversal), loadWasm(traversal), true},
		{"1 GiB of zeros, gzipped (a bomb)", loadRego(bomb), loadWasm(bomb), false},
		{"not gzip at all", loadRego([]byte("PK\x03\x04")), loadWasm([]byte("PK\x03\x04")), false},
	}
	if _, err := os.Stat(escape); err == nil {
		rows = append(rows, BundleRow{What: "the climbing entry was written to " + escape, RegoErr: fmt.Errorf("escaped"), WasmErr: fmt.Errorf("escaped"), WantLoad: true})
	}
	var b strings.Builder
	b.WriteString("## Bundles\n\nWhat the Rego bundle reader (`aclc serve --bundle`, `aclc eval --bundle`) and the Wasm host (`wasm.Load`) do with damaged or hostile bundles. Signed bundles with a changed byte are refused by both aclc serve and stock opa (`make e2e`, TestE2ESignedBundles).\n\n| bundle | Rego reader | Wasm host |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.What, verdict(r.RegoErr), verdict(r.WasmErr))
	}
	b.WriteString("\n")
	return rows, b.String(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 140 {
		s = s[:140] + "…"
	}
	return s
}

// --- vovacl ---------------------------------------------------------------

// VovaclResult counts the edits of the concurrent vovacl run.
type VovaclResult struct{ Edits, Failed, Lost int }

// Vovacl runs pairs of aclc vovacl processes on one file at the same time.
func Vovacl(aclc string, pairs int) (res VovaclResult, md string, err error) {
	defer recoverSetup(&err)
	dir, err := os.MkdirTemp("", "aclc-vovacl-")
	check(err)
	defer os.RemoveAll(dir)
	spec := filepath.Join(dir, "s.yaml")
	check(os.WriteFile(spec, []byte("vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: S\n    owner: joe\n    acl: []\n"), 0o644))
	var wg sync.WaitGroup
	var failed atomic.Int64
	start := time.Now()
	for i := range pairs {
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(aclc, "vovacl", "--spec", spec, "-agent", fmt.Sprintf("USER u%03d", 2*i+j), "-append", "-actions", "VIEW", "S")
				if out, err := cmd.CombinedOutput(); err != nil {
					failed.Add(1)
					fmt.Fprintf(os.Stderr, "vovacl: %v: %s\n", err, out)
				}
			}()
		}
		if i%10 == 9 {
			wg.Wait() // ten pairs at a time: processes, not goroutines
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	text, err := os.ReadFile(spec)
	check(err)
	lost := 0
	for k := range 2 * pairs {
		if !bytes.Contains(text, []byte(fmt.Sprintf("u%03d", k))) {
			lost++
		}
	}
	res = VovaclResult{Edits: 2 * pairs, Failed: int(failed.Load()), Lost: lost}
	return res, fmt.Sprintf("## Concurrent edits\n\n%d pairs of `aclc vovacl -append` processes edited one file at the same time (ten pairs at once), in %.1f s: %d edits failed, **%d of %d edits lost**.\n\n", pairs, elapsed.Seconds(), failed.Load(), lost, 2*pairs), nil
}

// --- fuzz -------------------------------------------------------------------

var fuzzFuncRE = regexp.MustCompile(`(?m)^func (Fuzz\w*)\(`)

// fuzzTargets finds every fuzz target in the module's test files, as make
// fuzz does.
func fuzzTargets() [][2]string {
	var out [][2]string
	check(filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "gatekeeper" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range fuzzFuncRE.FindAllStringSubmatch(string(src), -1) {
			out = append(out, [2]string{m[1], "./" + filepath.Dir(p)})
		}
		return nil
	}))
	return out
}

// Fuzz runs every fuzz target for d each.
func Fuzz(d time.Duration) (md string, err error) {
	defer recoverSetup(&err)
	var b strings.Builder
	fmt.Fprintf(&b, "## Fuzzing\n\nEvery fuzz target of the module (as `make fuzz` finds them), for %s each in this run (`make fuzz` runs them for `FUZZTIME`). A failure would be listed with its input under the package's testdata/fuzz.\n\n| target | package | executions | new interesting inputs | result |\n|---|---|---:|---:|---|\n", d)
	var total int64
	for _, m := range fuzzTargets() {
		name, pkg := m[0], m[1]
		cmd := exec.Command("go", "test", "-run", "xxx", "-fuzz", "^"+name+"$", "-fuzztime", d.String(), pkg)
		out, err := cmd.CombinedOutput()
		execs, interesting := fuzzCounts(out)
		total += execs
		result := "pass"
		if err != nil {
			result = "**FAIL**: " + strings.ReplaceAll(firstLine(lastFailure(out)), "|", "\\|")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %d | %d | %s |\n", name, pkg, execs, interesting, result)
	}
	fmt.Fprintf(&b, "\n%d executions in all.\n", total)
	return b.String(), nil
}

var execsRE = regexp.MustCompile(`execs: (\d+) .*new interesting: (\d+)`)

func fuzzCounts(out []byte) (execs, interesting int64) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := execsRE.FindStringSubmatch(sc.Text()); m != nil {
			execs, _ = strconv.ParseInt(m[1], 10, 64)
			interesting, _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	return
}

func lastFailure(out []byte) string {
	lines := strings.Split(string(out), "\n")
	for _, l := range lines {
		if strings.Contains(l, "FAIL") || strings.Contains(l, "panic") || strings.Contains(l, "Error") {
			return strings.TrimSpace(l)
		}
	}
	return "see the output"
}

func tarGz(files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		check(tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write(files[n])
		check(err)
	}
	check(tw.Close())
	check(zw.Close())
	return buf.Bytes()
}

// gzipZeros is a gzip stream of n zero bytes (about n/1000 bytes long).
func gzipZeros(n int) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	check(err)
	zeros := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(zeros))
		_, err := zw.Write(zeros[:k])
		check(err)
		n -= k
	}
	check(zw.Close())
	return buf.Bytes()
}

// extract returns one file of a .tar.gz.
func extract(tgz []byte, name string) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	check(err)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		check(err)
		if h.Name == name || "/"+h.Name == name {
			b, err := io.ReadAll(tr)
			check(err)
			return b
		}
	}
}
