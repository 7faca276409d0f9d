package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/wasm"
)

// stockOPA returns the stock opa binary (make bin/opa builds it from the
// version go.mod pins; make test sets ACLC_OPA).
func stockOPA(t *testing.T) string {
	t.Helper()
	p := os.Getenv("ACLC_OPA")
	if p == "" {
		t.Skip("ACLC_OPA is not set; make bin/opa builds the stock opa binary")
	}
	return p
}

// buildCLI runs aclc build and returns the bundle's path and stderr.
func buildCLI(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	code, _, stderr := runCLI(t, "", append([]string{"build", "--output-file", out}, args...)...)
	if code != exitOK {
		t.Fatalf("aclc build %v: exit %d: %s", args, code, stderr)
	}
	return out, stderr
}

// opaEvalAllow asks stock opa eval -b for a decision's allow.
func opaEvalAllow(t *testing.T, opa string, bundles []string, query, input string) (bool, error) {
	t.Helper()
	in := writeFile(t, "input.json", input)
	args := []string{"eval", "--format", "raw", "--input", in}
	for _, b := range bundles {
		args = append(args, "-b", b)
	}
	out, err := exec.Command(opa, append(args, query)...).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("%v: %s", err, out)
	}
	var d struct {
		Allow bool `json:"allow"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return false, fmt.Errorf("%v: %s", err, out)
	}
	return d.Allow, nil
}

const (
	johnAdminsTest = `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`
	patChownsJob   = `{"object":"00123456","action":"CHOWN","user":"pat","host":"elko"}`
)

// The rego bundles aclc build writes load in stock opa eval -b and answer
// as aclc does: a queue bundle built --portable, a VOV bundle (which needs
// no builtin), and both side by side, since each claims only its own roots.
func TestStockOPAEvalLoadsBuiltBundles(t *testing.T) {
	opa := stockOPA(t)
	queues, warn := buildCLI(t, "--portable", seedConfig)
	if warn != "" {
		t.Errorf("a portable build warns: %s", warn)
	}
	vovBundle, warn := buildCLI(t, "../../examples/vov/acls.yaml")
	if warn != "" {
		t.Errorf("a VOV build warns: %s", warn)
	}
	tests := []struct {
		name    string
		bundles []string
		query   string
		input   string
	}{
		{"a portable queue bundle", []string{queues}, "data.yunikorn.queues.decision", johnAdminsTest},
		{"a VOV bundle", []string{vovBundle}, "data.vov.acl.decision", patChownsJob},
		{"both side by side: queues", []string{vovBundle, queues}, "data.yunikorn.queues.decision", johnAdminsTest},
		{"both side by side: VOV", []string{vovBundle, queues}, "data.vov.acl.decision", patChownsJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allow, err := opaEvalAllow(t, opa, tt.bundles, tt.query, tt.input)
			if err != nil || !allow {
				t.Errorf("allow %v, err %v", allow, err)
			}
		})
	}
}

// The default build calls no aclc builtin, so stock OPA loads it and
// the build warns about nothing; --host-builtins builds the bundle that
// calls them, which the summary names and stock OPA refuses.
func TestBuildDefaultIsStockOPAsBundle(t *testing.T) {
	opa := stockOPA(t)
	b, warn := buildCLI(t, "../../examples/admission/configmap.yaml")
	if warn != "" {
		t.Errorf("the default build warns: %s", warn)
	}
	if _, err := opaEvalAllow(t, opa, []string{b}, "data.yunikorn.queues.decision", johnAdminsTest); err != nil {
		t.Errorf("stock opa refused the default bundle: %v", err)
	}
	out := filepath.Join(t.TempDir(), "host.tar.gz")
	code, stdout, stderr := runCLI(t, "", "build", "--host-builtins", "--output-file", out, "../../examples/admission/configmap.yaml")
	if code != exitOK || !strings.Contains(stdout, "needs aclc.k8s_decode_error") || stderr != "" {
		t.Errorf("--host-builtins: exit %d, %s %s", code, stdout, stderr)
	}
	if _, err := opaEvalAllow(t, opa, []string{out}, "data.yunikorn.queues.decision", johnAdminsTest); err == nil || !strings.Contains(err.Error(), "undefined function aclc.") {
		t.Errorf("stock opa loaded a bundle that calls aclc's builtins: %v", err)
	}
}

// A resolver that asks at decision time has no bundle stock OPA runs: the
// default build refuses it in one line naming --host-builtins, writes
// nothing, and --host-builtins builds it; the two forms' flags exclude
// each other.
func TestBuildRefusesWhatOnlyHostBuiltinsDecide(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	code, _, stderr := runCLI(t, "", "build", "--resolver", "os", "--output-file", out, seedConfig)
	if code != exitError || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "os resolver") || !strings.Contains(stderr, "--host-builtins") {
		t.Errorf("the os resolver by default: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a bundle was written")
	}
	code, stdout, stderr := runCLI(t, "", "build", "--host-builtins", "--resolver", "os", "--output-file", out, seedConfig)
	if code != exitOK || !strings.Contains(stdout, "aclc.user_groups") || stderr != "" {
		t.Errorf("--host-builtins with the os resolver: exit %d, %s %s", code, stdout, stderr)
	}
	for _, flag := range []string{"--portable", "--static-groups"} {
		if code, _, stderr := runCLI(t, "", "build", "--host-builtins", flag, "--output-file", out, seedConfig); code != exitUsage {
			t.Errorf("--host-builtins %s: exit %d, %s", flag, code, stderr)
		}
	}
}

// decisionCase is one input for one entry point of a bundle's sources.
type decisionCase struct {
	entrypoint, input string
}

// defaultBundleCases are an input per entry point of every decision family,
// with the sources that decide them.
var defaultBundleCases = []struct {
	sources []string
	cases   []decisionCase
}{
	{[]string{"../../examples/admission/queue.yaml"}, []decisionCase{
		{"yunikorn/queues/decision", `{"queue":"root.private","action":"submit","user":"alice","groups":["dev"]}`},
		{"yunikorn/queues/decision", `{"queue":"root.teams.team-a","action":"submit","user":"alice"}`},
		{"yunikorn/queues/placement", `{"application":{"id":"app-1","queue":"","user":"alice","groups":["dev"],"tags":{"namespace":"team-a"}}}`},
		{"yunikorn/admission/queue", "@../../examples/admission/reviews/pod-queue-diverted.json"},
		{"yunikorn/admission/queue", "@../../examples/admission/reviews/pod-queue-rejected.json"},
	}},
	{[]string{"../../examples/admission/configmap-with-queues.yaml"}, []decisionCase{
		{"yunikorn/queues/decision", `{"queue":"root.spark","action":"submit","user":"ann","groups":["spark-submitters"]}`},
		{"yunikorn/admission/review", "@../../examples/admission/reviews/pod-create-user.json"},
		{"yunikorn/admission/review", "@../../examples/admission/reviews/pod-create-controller.json"},
		{"yunikorn/admission/review", "@../../examples/admission/reviews/deployment-create.json"},
		{"yunikorn/admission/review", "@../../examples/admission/reviews/pod-update-change-annotation.json"},
	}},
	{[]string{"../../examples/vov/acls.yaml"}, []decisionCase{
		{"vov/acl/decision", patChownsJob},
		{"vov/acl/decision", `{"object":"00123456","action":"DELETE","user":"nobody","host":"elko"}`},
	}},
}

// read returns a case's input: inline JSON, or @FILE.
func (c decisionCase) read(t *testing.T) string {
	t.Helper()
	if name, ok := strings.CutPrefix(c.input, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return c.input
}

// nativeDecision is aclc's reference answer over the sources.
func nativeDecision(t *testing.T, c decisionCase, input string, sources []string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, input, append([]string{"eval", "--engine", "native", "--entrypoint", c.entrypoint}, sources...)...)
	if code != exitOK {
		t.Fatalf("aclc eval --engine native %s: exit %d: %s", c.entrypoint, code, stderr)
	}
	return stdout
}

// The bundle aclc build writes by default is served by stock opa run and
// evaluated by opa eval -b with the reference answer at every entry point.
func TestStockOPAServesTheDefaultBundle(t *testing.T) {
	opa := stockOPA(t)
	for _, set := range defaultBundleCases {
		t.Run(filepath.Base(set.sources[0]), func(t *testing.T) {
			b, warn := buildCLI(t, set.sources...)
			if warn != "" {
				t.Errorf("the default build warns: %s", warn)
			}
			url, _ := startStockOPA(t, opa, b, "/health", "")
			for _, c := range set.cases {
				input := c.read(t)
				want := nativeDecision(t, c, input, set.sources)
				resp, err := http.Post(url+"/v1/data/"+c.entrypoint, "application/json", strings.NewReader(`{"input":`+input+`}`))
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var got struct {
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(raw, &got); err != nil || got.Result == nil {
					t.Fatalf("opa run %s: %s (%v)", c.entrypoint, raw, err)
				}
				if !sameJSON(t, got.Result, want) {
					t.Errorf("opa run %s %s:\n got %s\nwant %s", c.entrypoint, c.input, got.Result, want)
				}
				cmd := exec.Command(opa, "eval", "--format", "raw", "-b", b, "--stdin-input", "data."+strings.ReplaceAll(c.entrypoint, "/", "."))
				cmd.Stdin = strings.NewReader(input)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("opa eval -b %s: %v: %s", c.entrypoint, err, out)
				}
				if !sameJSON(t, out, want) {
					t.Errorf("opa eval -b %s %s:\n got %s\nwant %s", c.entrypoint, c.input, out, want)
				}
			}
		})
	}
}

// The default Wasm bundle runs without aclc's builtins: aclc's host,
// given none, loads it (it refuses a module that needs one it lacks), and
// it answers there and on OPA's Wasm SDK with the reference answer.
func TestDefaultWasmBundleNeedsNoBuiltin(t *testing.T) {
	ctx := context.Background()
	for _, set := range defaultBundleCases {
		t.Run(filepath.Base(set.sources[0]), func(t *testing.T) {
			b, warn := buildCLI(t, append([]string{"-t", "wasm"}, set.sources...)...)
			if warn != "" {
				t.Errorf("the default build warns: %s", warn)
			}
			p, err := wasm.LoadFile(ctx, b, wasm.NewConfig().WithPoolSize(1))
			if err != nil {
				t.Fatalf("aclc's host without builtins: %v", err)
			}
			defer p.Close(ctx)
			for _, c := range set.cases {
				input := c.read(t)
				want := nativeDecision(t, c, input, set.sources)
				got, err := p.Eval(ctx, c.entrypoint, []byte(input))
				if err != nil || !sameJSON(t, got, want) {
					t.Errorf("wasm package %s %s:\n got %s (%v)\nwant %s", c.entrypoint, c.input, got, err, want)
				}
				code, stdout, stderr := runCLI(t, input, "eval", "--engine", "opa-wasm", "--bundle", b, "--entrypoint", c.entrypoint)
				if code != exitOK || !sameJSON(t, []byte(stdout), want) {
					t.Errorf("OPA's Wasm SDK %s %s: exit %d:\n got %s %s\nwant %s", c.entrypoint, c.input, code, stdout, stderr, want)
				}
			}
		})
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// opa run --server serves the built bundle; opa inspect reads the
// manifest's aclc metadata, on the Wasm bundle too.
func TestStockOPARunServesBuiltBundle(t *testing.T) {
	opa := stockOPA(t)
	b, _ := buildCLI(t, "--portable", seedConfig)
	if _, body := startStockOPA(t, opa, b, "/v1/data/yunikorn/queues/decision", `{"input":`+johnAdminsTest+`}`); !strings.Contains(body, `"allow":true`) {
		t.Fatalf("opa run: %s", body)
	}

	for _, target := range []string{"rego", "wasm"} {
		b, _ := buildCLI(t, "--portable", "-t", target, seedConfig)
		raw, err := exec.Command(opa, "inspect", "--format", "json", b).CombinedOutput()
		if err != nil {
			t.Fatalf("opa inspect %s: %v: %s", target, err, raw)
		}
		var insp struct {
			Manifest struct {
				Roots    []string `json:"roots"`
				Metadata struct {
					ACLC struct {
						Version   string   `json:"version"`
						Target    string   `json:"target"`
						Builtins  []string `json:"builtins"`
						Decisions []string `json:"decisions"`
						Sources   []string `json:"sources"`
					} `json:"aclc"`
				} `json:"metadata"`
			} `json:"manifest"`
		}
		if err := json.Unmarshal(raw, &insp); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		m := insp.Manifest.Metadata.ACLC
		if m.Version == "" || m.Target != target || m.Builtins == nil || len(m.Builtins) != 0 || len(m.Decisions) == 0 || len(m.Sources) != 1 || m.Sources[0] != seedConfig {
			t.Errorf("%s manifest metadata %+v", target, m)
		}
		for _, r := range insp.Manifest.Roots {
			if strings.HasPrefix(r, "vov") || r == "aclc/vov" {
				t.Errorf("%s: a queue bundle claims VOV root %q", target, r)
			}
		}
	}
}

// startStockOPA runs opa run --server on the bundle, on a free loopback
// port, until the test ends, and posts body to path until the server
// answers (20 s at most). It returns the server's URL and that answer.
func startStockOPA(t *testing.T, opa, bundle, path, body string) (url, answer string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out bytes.Buffer
	cmd := exec.Command(opa, "run", "--server", "--addr", addr, "--log-level", "error", "--skip-version-check", bundle)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url = "http://" + addr
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := client.Post(url+path, "application/json", strings.NewReader(body))
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return url, string(raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("opa run: %v\n%s", err, out.String())
		}
	}
}
