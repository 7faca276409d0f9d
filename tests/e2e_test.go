package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/bundletest"
)

// Names of the engines the end-to-end run adds: the http engine against
// stock `opa run` and against `aclc serve`.
const (
	HTTPStockOPA = "http-opa"
	HTTPServe    = "http-serve"
)

// e2e skips the test unless the end-to-end run was asked for (make e2e),
// and returns the stock opa binary.
func e2e(t *testing.T) string {
	t.Helper()
	if os.Getenv("ACLC_E2E") != "1" {
		t.Skip("ACLC_E2E is not 1; make e2e runs the end-to-end tests")
	}
	return stockOPA(t)
}

// freeAddr returns a loopback address nobody listens on, for a server that
// cannot report the port it picked.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// opaServer is a stock `opa run --server` process.
type opaServer struct {
	cmd    *exec.Cmd
	url    string
	output *bytes.Buffer
	exited chan error
}

// startOPA starts stock opa on a free port with the bundle and waits until
// /health answers. A process that exits first (its port taken meanwhile, or
// a bundle it refuses) is returned as an error with its output.
func startOPA(t *testing.T, opa string, args ...string) (*opaServer, error) {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr := freeAddr(t)
		out := &bytes.Buffer{}
		cmd := exec.Command(opa, append([]string{"run", "--server", "--addr", addr, "--log-level", "error", "--skip-version-check"}, args...)...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		s := &opaServer{cmd: cmd, url: "http://" + addr, output: out, exited: make(chan error, 1)}
		go func() { s.exited <- cmd.Wait() }()
		if lastErr = s.waitHealthy(20 * time.Second); lastErr == nil {
			return s, nil
		}
		s.stop()
		if !strings.Contains(out.String(), "address already in use") {
			break
		}
	}
	return nil, lastErr
}

func (s *opaServer) waitHealthy(d time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("opa exited (%v): %s", err, s.output.String())
		default:
		}
		if resp, err := client.Get(s.url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("opa not healthy after %s: %s", d, s.output.String())
}

func (s *opaServer) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// serveInProcess runs aclc serve on a free port until stop is called.
func serveInProcess(ctx context.Context, cfg serve.Config) (url string, stop func() error, err error) {
	url, stop, _, err = serveInProcessCache(ctx, cfg)
	return url, stop, err
}

// serveInProcessCache is serveInProcess that also returns the server's
// group cache, which a test empties between cases.
func serveInProcessCache(ctx context.Context, cfg serve.Config) (url string, stop func() error, groups *builtins.Cache, err error) {
	srv, err := serve.New(ctx, cfg.WithAddr("127.0.0.1:0").WithLogLevel("error").WithLogOutput(io.Discard))
	if err != nil {
		return "", nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func(a string) { ready <- a }) }()
	select {
	case a := <-ready:
		return "http://" + a, func() error { cancel(); return <-done }, srv.GroupCache(), nil
	case err := <-done:
		cancel()
		return "", nil, nil, err
	}
}

func writeBundle(t *testing.T, s *translate.Sources) string {
	t.Helper()
	b, err := translate.RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := translate.BundleBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sourceGroup is the cases that share one source (and resolver,
// replicated namespaces and YuniKorn release): one server of each kind
// answers them all.
type sourceGroup struct {
	first *Case
	rel   translate.YuniKornRelease
	cases []*Case
}

// TestE2ECorpusOverHTTP decides every corpus case over HTTP, against stock
// `opa run` serving a bundle built without any aclc builtin (static groups,
// portable admission decoding) and against `aclc serve` serving the bundle
// with aclc's builtins, and compares both with the native reference and the
// case's expectations. Known divergences are named in exceptions.yaml; a
// listed case that no longer diverges fails, as in TestCorpus.
func TestE2ECorpusOverHTTP(t *testing.T) {
	opa := e2e(t)
	ctx := context.Background()
	files, err := Load("..", "corpus")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := LoadExceptions("exceptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]*sourceGroup{}
	var keys []string
	notes := map[string]bool{}
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			notes[c.Note] = true
			if c.WantError != "" {
				continue // a source that does not load is never served; TestCorpus checks its error
			}
			for _, rel := range c.Releases {
				key := rel.Name() + "\x00" + c.Resolver + "\x00" + mustJSON(c.Namespaces) + "\x00" + Key(c.Inputs)
				g, ok := groups[key]
				if !ok {
					g = &sourceGroup{first: c, rel: rel}
					groups[key] = g
					keys = append(keys, key)
				}
				g.cases = append(g.cases, c)
			}
		}
	}
	sdk := jsSDK(t)
	for _, eng := range []string{HTTPStockOPA, HTTPServe, JSWasm} {
		for note := range ex[eng] {
			if !notes[note] {
				t.Errorf("exceptions.yaml lists %s for %s, which is not a corpus case", note, eng)
			}
		}
	}
	t.Logf("%d sources, one stock opa and one aclc serve each", len(keys))
	for _, key := range keys {
		g := groups[key]
		c0 := g.first
		load := func(static, portable bool) (*translate.Sources, error) {
			s, err := (&translate.Sources{}).WithYuniKornRelease(g.rel)
			if err != nil {
				return nil, err
			}
			if err := AddTo(s, c0.Inputs); err != nil {
				return nil, err
			}
			s, err = s.WithKubernetes(c0.Kubernetes()).WithGroupResolution(c0.Resolver, static)
			if err == nil && portable {
				s = s.WithPlainDecoding()
			}
			return s, err
		}

		// Stock opa: no aclc builtin at all.
		var stock engine.Engine
		var stockErr error
		if s, err := load(true, true); err != nil {
			stockErr = fmt.Errorf("no bundle for stock opa: %w", err)
		} else if srv, err := startOPA(t, opa, writeBundle(t, s)); err != nil {
			stockErr = err
		} else {
			defer srv.stop()
			if stock, err = engine.NewHTTP(srv.url); err != nil {
				t.Fatal(err)
			}
		}

		// OPA's JavaScript SDK: the same portable bundle, compiled to Wasm.
		var js engine.Engine
		var jsErr error
		if sdk != "" {
			if s, err := load(true, true); err != nil {
				jsErr = fmt.Errorf("no bundle for the JavaScript SDK: %w", err)
			} else if e, err := startJS(t, sdk, s); err != nil {
				jsErr = err
			} else {
				js = e
				defer e.Close(ctx)
			}
		}

		// aclc serve: its builtins, groups compiled in where they can be.
		s, err := load(true, false)
		if err != nil {
			if s, err = load(false, false); err != nil {
				t.Fatalf("%s: %v", c0.Note, err)
			}
		}
		native := engine.NewNative(s, nil)
		url, stop, servedGroups, err := serveInProcessCache(ctx, serve.NewConfig().WithBundle(writeBundle(t, s)).WithResolver(c0.Resolver).WithReloadInterval(0))
		if err != nil {
			t.Fatalf("%s: aclc serve: %v", c0.Note, err)
		}
		served, err := engine.NewHTTP(url)
		if err != nil {
			t.Fatal(err)
		}

		for _, c := range g.cases {
			name := c.Note
			if len(c.Versions) > 0 {
				name += "/" + g.rel.Name()
			}
			t.Run(name, func(t *testing.T) {
				input, err := c.InputJSON()
				if err != nil {
					t.Fatal(err)
				}
				native.GroupCache().Reset()
				ref, err := native.Eval(ctx, c.Entrypoint, input)
				if err != nil {
					t.Fatalf("native: %v", err)
				}
				for _, e := range []struct {
					name   string
					eng    engine.Engine
					notRun error
				}{{HTTPStockOPA, stock, stockErr}, {HTTPServe, served, nil}, {JSWasm, js, jsErr}} {
					if e.name == JSWasm && sdk == "" {
						continue
					}
					servedGroups.Reset() // each engine starts the case from an empty cache
					var problem string
					if e.notRun != nil {
						problem = "error: " + e.notRun.Error()
					} else if got, err := e.eng.Eval(ctx, c.Entrypoint, input); err != nil {
						problem = "error: " + err.Error()
					} else if !SameJSON(ref, got) {
						problem = "differs from native: got " + string(got) + ", native " + string(ref)
					} else {
						problem = c.Check(got)
					}
					why, excepted, inherited := ex.Lookup(e.name, c.Note)
					switch {
					case excepted && problem == "" && inherited:
					case excepted && problem == "":
						t.Errorf("%s: passes but is listed in exceptions.yaml (%s): remove the entry", e.name, why)
					case excepted:
						t.Logf("%s: known divergence (%s): %s", e.name, why, problem)
					case problem != "":
						t.Errorf("%s: %s\ninput: %s", e.name, problem, input)
					}
				}
			})
		}
		if err := stop(); err != nil {
			t.Errorf("aclc serve: %v", err)
		}
		_ = served.Close(ctx)
		if stock != nil {
			_ = stock.Close(ctx)
		}
	}
}

// TestE2ESignedBundles: stock opa and aclc serve both load a bundle signed
// by aclc and both refuse it once one byte of its data or of a policy file
// has changed.
func TestE2ESignedBundles(t *testing.T) {
	opa := e2e(t)
	ctx := context.Background()
	s, err := translate.LoadSources([]string{"../examples/admission/configmap-with-queues.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", true); err != nil {
		t.Fatal(err)
	}
	s = s.WithPlainDecoding()
	const in = `{"queue":"root.spark","action":"submit","user":"ann","groups":["spark-submitters"]}`
	for _, alg := range []string{"RS256", "ES256"} {
		t.Run(alg, func(t *testing.T) {
			priv, pub := bundletest.WriteKeyPair(t, alg)
			b, err := translate.RegoBundle(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := translate.SignBundle(b, translate.Signing{KeyFile: priv, KeyID: "prod"}); err != nil {
				t.Fatal(err)
			}
			raw, err := translate.BundleBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			signed := filepath.Join(dir, "signed.tar.gz")
			if err := os.WriteFile(signed, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			tampered := map[string]string{}
			for _, tc := range []struct{ file, old, new string }{
				{"/data.json", `"data-eng"`, `"data-enG"`},
				{"/yunikorn/queues.rego", "allow", "allov"},
			} {
				out, err := bundletest.Tamper(raw, tc.file, tc.old, tc.new)
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, strings.ReplaceAll(strings.Trim(tc.file, "/"), "/", "_")+".tar.gz")
				if err := os.WriteFile(p, out, 0o644); err != nil {
					t.Fatal(err)
				}
				tampered[tc.file] = p
			}
			vc, err := translate.Verification{KeyFile: pub, KeyID: "prod"}.VerificationConfig()
			if err != nil {
				t.Fatal(err)
			}
			opaArgs := func(bundle string) []string {
				return []string{"--verification-key", pub, "--verification-key-id", "prod", "--signing-alg", alg, "--bundle", bundle}
			}

			srv, err := startOPA(t, opa, opaArgs(signed)...)
			if err != nil {
				t.Fatalf("stock opa refused the signed bundle: %v", err)
			}
			url, stop, err := serveInProcess(ctx, serve.NewConfig().WithBundle(signed).WithVerification(vc))
			if err != nil {
				srv.stop()
				t.Fatalf("aclc serve refused the signed bundle: %v", err)
			}
			for name, u := range map[string]string{"stock opa": srv.url, "aclc serve": url} {
				e, _ := engine.NewHTTP(u)
				got, err := e.Eval(ctx, translate.EntrypointYuniKornQueues, []byte(in))
				if err != nil || !strings.Contains(string(got), `"allow":true`) {
					t.Errorf("%s: %s %v", name, got, err)
				}
			}
			srv.stop()
			if err := stop(); err != nil {
				t.Error(err)
			}

			files := make([]string, 0, len(tampered))
			for f := range tampered {
				files = append(files, f)
			}
			sort.Strings(files)
			for _, f := range files {
				want := filepath.Base(f) + ": digest mismatch"
				if srv, err := startOPA(t, opa, opaArgs(tampered[f])...); err == nil {
					srv.stop()
					t.Errorf("stock opa loaded a bundle whose %s changed after signing", f)
				} else if !strings.Contains(err.Error(), want) {
					t.Errorf("stock opa refused %s without saying %q: %v", f, want, err)
				}
				if _, stop, err := serveInProcess(ctx, serve.NewConfig().WithBundle(tampered[f]).WithVerification(vc)); err == nil {
					_ = stop()
					t.Errorf("aclc serve loaded a bundle whose %s changed after signing", f)
				} else if !strings.Contains(err.Error(), want) {
					t.Errorf("aclc serve refused %s without saying %q: %v", f, want, err)
				}
			}
		})
	}
}
