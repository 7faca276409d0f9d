package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/tests/bundletest"
)

const serveQueues = `partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: test
            submitacl: "*"
            adminacl: sue dev,test
`

// startServe runs 'aclc serve' in-process until the test ends, and returns
// its base URL and its output.
func startServe(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	old := serveContext
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(append([]string{"serve", "--addr", "127.0.0.1:0", "--reload-interval", "20ms"}, args...), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("serve exited %d after SIGTERM; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), "aclc serve: stopped") {
				t.Errorf("no graceful stop: %s", stdout.String())
			}
		case <-time.After(20 * time.Second):
			t.Errorf("serve did not stop")
		}
		serveContext = old
	})
	addrRE := regexp.MustCompile(`listening on (https?://127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := addrRE.FindStringSubmatch(stdout.String()); m != nil {
			return m[1], stderr
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("exited %d before listening: %s %s", code, stdout.String(), stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 60s: %s", stderr.String())
		}
	}
}

// decide POSTs input to the Data API and returns the result.
func decide(t *testing.T, url, ep, input string) map[string]any {
	t.Helper()
	resp, err := http.Post(url+"/v1/data/"+ep, "application/json", strings.NewReader(`{"input":`+input+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s: %s", ep, resp.Status, raw)
	}
	var out struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Result == nil {
		t.Fatalf("%s: no result in %s (%v)", ep, raw, err)
	}
	return out.Result
}

// eventually retries f until it returns "" or the deadline passes.
func eventually(t *testing.T, what string, f func() string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if last = f(); last == "" {
			return
		}
	}
	t.Fatalf("%s: %s", what, last)
}

// rewrite replaces a file the way editors and ConfigMap updates do: a new
// file renamed over the old one.
func rewrite(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestServeAnswersAndReloads: both decisions are served over OPA's Data
// API; a changed source is served without a restart; a broken source keeps
// the last good bundle and the error names the file and line.
func TestServeAnswersAndReloads(t *testing.T) {
	raw, err := os.ReadFile("../../examples/admission/configmap-with-queues.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(raw)
	src := writeFile(t, "yunikorn-configs.yaml", good)
	url, stderr := startServe(t, src)

	const q = "yunikorn/queues/decision"
	in := `{"queue":"root.spark","action":"submit","user":"ann","groups":["data-eng"]}`
	if got := decide(t, url, q, in); got["allow"] != false {
		t.Fatalf("data-eng may not submit to root.spark yet: %v", got)
	}
	review, err := os.ReadFile("../../examples/admission/reviews/pod-create-user.json")
	if err != nil {
		t.Fatal(err)
	}
	got := decide(t, url, "yunikorn/admission/review", string(review))
	resp, _ := got["response"].(map[string]any)
	if resp["allowed"] != true || resp["patchType"] != "JSONPatch" {
		t.Fatalf("admission review: %v", got)
	}
	for _, p := range []string{"/health", "/metrics"} {
		r, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("%s: %s", p, r.Status)
		}
	}

	changed := strings.Replace(good, `submitacl: " spark-submitters"`, `submitacl: " spark-submitters,data-eng"`, 1)
	if changed == good {
		t.Fatal("the example no longer has the line this test edits")
	}
	rewrite(t, src, changed)
	eventually(t, "the changed source is not served", func() string {
		if got := decide(t, url, q, in); got["allow"] != true {
			return "still " + mustJSON(got)
		}
		return ""
	})

	// YAML that does not parse: the error is logged, the last good bundle stays.
	rewrite(t, src, changed+"  queues.yaml: [\n")
	eventually(t, "the broken source is not reported", func() string {
		if !strings.Contains(stderr.String(), "Reload failed") {
			return stderr.String()
		}
		return ""
	})
	if !regexp.MustCompile(regexp.QuoteMeta(src) + `:\d+`).MatchString(stderr.String()) {
		t.Errorf("the reload error does not name %s and a line:\n%s", src, stderr.String())
	}
	if got := decide(t, url, q, in); got["allow"] != true {
		t.Errorf("the last good bundle is not served after a broken change: %v", got)
	}

	// The http engine reads the same server.
	code, out, errOut := runCLI(t, in, "eval", "--engine", "http", "--url", url, "--entrypoint", q)
	if code != exitOK || !strings.Contains(out, `"allow": true`) {
		t.Errorf("eval --engine http: exit %d, %s %s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, in, "eval", "--engine", "http", "--url", url, "--entrypoint", "nosuch/decision")
	if code != exitError || !strings.Contains(errOut, "undefined") {
		t.Errorf("eval --engine http of a decision the server lacks: exit %d, %s", code, errOut)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestServeDecisionLogs(t *testing.T) {
	src := writeFile(t, "queues.yaml", serveQueues)
	url, stderr := startServe(t, "--decision-logs", "--log-level", "error", src)
	decide(t, url, "yunikorn/queues/decision", `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`)
	eventually(t, "no decision log", func() string {
		if !strings.Contains(stderr.String(), `"msg":"Decision Log"`) || !strings.Contains(stderr.String(), `"john"`) {
			return stderr.String()
		}
		return ""
	})
	if strings.Contains(stderr.String(), "Received request") {
		t.Errorf("--log-level error still logs requests:\n%s", stderr.String())
	}
}

func TestServeUsage(t *testing.T) {
	src := writeFile(t, "queues.yaml", serveQueues)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no source and no bundle", nil, exitUsage, "give SOURCE files or --bundle"},
		{"sources and a bundle", []string{"--bundle", "b.tar.gz", src}, exitUsage, "not both"},
		{"a verification key for sources", []string{"--verification-key", "k.pem", src}, exitUsage, "sources are not signed"},
		{"a key id without a key", []string{"--verification-key-id", "x", "--bundle", "b.tar.gz"}, exitUsage, "go with --verification-key"},
		{"static groups for a built bundle", []string{"--static-groups", "--bundle", "b.tar.gz"}, exitUsage, "aclc build --static-groups"},
		{"an unknown log level", []string{"--log-level", "loud", src}, exitUsage, `--log-level "loud"`},
		{"a negative reload interval", []string{"--reload-interval", "-1s", src}, exitUsage, "want 0 or more"},
		{"a negative decision timeout", []string{"--decision-timeout", "-1s", src}, exitUsage, "--decision-timeout -1s: want 0 or more"},
		{"a TLS certificate without its key", []string{"--tls-cert", src, src}, exitUsage, "--tls-cert and --tls-key go together"},
		{"a TLS key pair that does not load", []string{"--tls-cert", src, "--tls-key", src, src}, exitError, "load TLS key pair"},
		{"an unknown authorization scheme", []string{"--authorization", "token", src}, exitUsage, `--authorization "token": want off or basic`},
		{"basic authorization without its policy", []string{"--authorization", "basic", src}, exitUsage, "needs --authorization-policy"},
		{"an authorization policy without basic authorization", []string{"--authorization-policy", src, src}, exitUsage, "goes with --authorization basic"},
		{"an authorization policy in another package", []string{"--authorization", "basic", "--authorization-policy", writeFile(t, "authz.rego", "package authz\nallow := true\n"), src}, exitUsage, "want package system.authz"},
		{"an unknown flag", []string{"--nope", src}, exitUsage, "unknown flag: --nope"},
		{"help", []string{"-h"}, exitOK, "--verification-key"},
		{"a broken source is refused with its line", []string{writeFile(t, "bad.yaml", "partitions: [\n")}, exitError, "bad.yaml:"},
		{"a missing bundle", []string{"--bundle", filepath.Join(t.TempDir(), "none.tar.gz")}, exitError, "none.tar.gz"},
		{"an address in use or bad", []string{"--addr", "256.0.0.1:1", src}, exitError, "256.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"serve", "--log-level", "error"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, stderr)
			}
			// Help goes to stdout, every complaint to stderr.
			got := stderr
			if tt.code == exitOK {
				got = stdout
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("output %q does not contain %q", got, tt.want)
			}
			if strings.Contains(stdout, "listening") && tt.code != exitError {
				t.Errorf("listened: %s", stdout)
			}
		})
	}
}

func TestEvalHTTPUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no url", []string{"--engine", "http", "--entrypoint", "yunikorn/queues/decision"}, "needs --url"},
		{"a url for another engine", []string{"--engine", "rego", "--url", "http://x", "--entrypoint", "yunikorn/queues/decision", "../../examples/yunikorn/sue.yaml"}, "--url goes with --engine http"},
		{"sources for the http engine", []string{"--engine", "http", "--url", "http://127.0.0.1:1", "--entrypoint", "yunikorn/queues/decision", "../../examples/yunikorn/sue.yaml"}, "takes no SOURCE"},
		{"a url that is not http", []string{"--engine", "http", "--url", "ftp://x", "--entrypoint", "yunikorn/queues/decision"}, "want http://host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "{}", append([]string{"eval"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// TestServeVerifiesSignedBundles: a bundle signed by 'aclc build
// --signing-key' is served with the matching key; a wrong key, an unsigned
// bundle and a bundle changed after signing are refused, saying why.
func TestServeVerifiesSignedBundles(t *testing.T) {
	src := writeFile(t, "queues.yaml", serveQueues)
	for _, alg := range []string{"RS256", "ES256"} {
		t.Run(alg, func(t *testing.T) {
			priv, pub := bundletest.WriteKeyPair(t, alg)
			_, otherPub := bundletest.WriteKeyPair(t, alg)
			dir := t.TempDir()
			signed := filepath.Join(dir, "signed.tar.gz")
			if code, _, stderr := runCLI(t, "", "build", "--signing-key", priv, "--signing-key-id", "prod", "--output-file", signed, src); code != exitOK {
				t.Fatalf("build: %s", stderr)
			}
			unsigned := filepath.Join(dir, "unsigned.tar.gz")
			if code, _, stderr := runCLI(t, "", "build", "--output-file", unsigned, src); code != exitOK {
				t.Fatalf("build: %s", stderr)
			}
			refused := []struct {
				name, bundle, key, want string
			}{
				{"another key", signed, otherPub, "failed to verify"},
				{"an unsigned bundle", unsigned, pub, "missing .signatures.json"},
				{"data.json changed after signing", TamperBundle(t, signed, "/data.json", "sue", "bob"), pub, "data.json: digest mismatch"},
				{"a policy file changed after signing", TamperBundle(t, signed, "/yunikorn/queues.rego", "allow", "allov"), pub, "queues.rego: digest mismatch"},
			}
			for _, r := range refused {
				code, stdout, stderr := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--log-level", "error",
					"--verification-key", r.key, "--verification-key-id", "prod", "--bundle", r.bundle)
				if code != exitError || !strings.Contains(stderr, r.want) || strings.Contains(stdout, "listening") {
					t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", r.name, code, stderr, r.want)
				}
			}
			url, _ := startServe(t, "--verification-key", pub, "--verification-key-id", "prod", "--bundle", signed)
			if got := decide(t, url, "yunikorn/queues/decision", `{"queue":"root.test","action":"admin","user":"sue"}`); got["allow"] != true {
				t.Errorf("signed bundle: %v", got)
			}
		})
	}
}

// TamperBundle rewrites one file of a .tar.gz bundle, replacing the first
// old with new (the same length, so only content changes), and returns the
// new bundle's path.
func TamperBundle(t *testing.T, path, file, old, new string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := bundletest.Tamper(raw, file, old, new)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tampered.tar.gz")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, raw) {
		t.Fatal("tampering changed nothing")
	}
	return p
}

// TestBuildPortableAndSigningFlags: --portable leaves out every aclc
// builtin; signing options need a key.
func TestBuildPortableAndSigningFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	code, stdout, stderr := runCLI(t, "", "build", "--portable", "--output-file", out, "../../examples/admission/configmap-with-queues.yaml")
	if code != exitOK || !strings.Contains(stdout, "no custom builtins") {
		t.Errorf("--portable: exit %d, %s %s", code, stdout, stderr)
	}
	// --static-groups promises a bundle stock OPA runs: the admission part
	// is decoded in plain Rego too.
	code, stdout, _ = runCLI(t, "", "build", "--static-groups", "--output-file", out, "../../examples/admission/configmap-with-queues.yaml")
	if code != exitOK || !strings.Contains(stdout, "no custom builtins") {
		t.Errorf("--static-groups with admission settings: exit %d, %s", code, stdout)
	}
	for _, args := range [][]string{{"--signing-alg", "ES256"}, {"--claims-file", "c.json"}, {"--signing-key-id", "x"}} {
		code, _, stderr := runCLI(t, "", append(append([]string{"build", "--output-file", out}, args...), "../../examples/yunikorn/sue.yaml")...)
		if code != exitUsage || !strings.Contains(stderr, "go with --signing-key") {
			t.Errorf("%v without --signing-key: exit %d, %s", args, code, stderr)
		}
	}
	code, _, stderr = runCLI(t, "", "build", "--portable", "--resolver", "os", "--output-file", out, "../../examples/yunikorn/sue.yaml")
	if code != exitError || !strings.Contains(stderr, "os resolver") {
		t.Errorf("--portable with the os resolver: exit %d, %s", code, stderr)
	}
}
