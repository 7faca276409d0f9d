package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

// queuesNoNamespaces returns YuniKorn's configuration of
// examples/admission/queue.yaml without its Namespaces: the namespace
// default has no yunikorn.apache.org/parentqueue, so an application of
// alice's there that names root.private is rejected.
func queuesNoNamespaces(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/admission/queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitN(string(b), "\n---\n", 2)[0]
}

// startServer serves cfg on a free loopback port until the test ends and
// returns its base URL.
func startServer(t *testing.T, cfg Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg.WithAddr("127.0.0.1:0").WithLogOutput(io.Discard).WithLogLevel("error"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func(a string) { ready <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case a := <-ready:
		if cfg.certFile != "" {
			return "https://" + a
		}
		return "http://" + a
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return ""
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// call sends one request and returns its status and body.
func call(t *testing.T, c *http.Client, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/json-patch+json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// queueAnswer asks yunikorn/admission/queue about alice's application in
// namespace default.
func queueAnswer(t *testing.T, base, token string) string {
	t.Helper()
	review, err := os.ReadFile("../../examples/admission/reviews/pod-queue-rejected.json")
	if err != nil {
		t.Fatal(err)
	}
	code, body := call(t, http.DefaultClient, http.MethodPost, base+"/v1/data/yunikorn/admission/queue", token, `{"input":`+string(review)+`}`)
	if code != http.StatusOK {
		t.Fatalf("decision: %d %s", code, body)
	}
	return body
}

// parentQueue is a Namespace default that would place alice's application
// under root.teams.
const parentQueue = `{"metadata":{"name":"default","annotations":{"yunikorn.apache.org/parentqueue":"root.teams"}}}`

// policySet returns the policies OPA holds, by id.
func policySet(t *testing.T, base string) map[string]string {
	t.Helper()
	_, body := call(t, http.DefaultClient, http.MethodGet, base+"/v1/policies", "", "")
	var list struct {
		Result []struct {
			ID  string `json:"id"`
			Raw string `json:"raw"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Result) == 0 {
		t.Fatalf("policies: %v %.200s", err, body)
	}
	out := map[string]string{}
	for _, p := range list.Result {
		out[p.ID] = p.Raw
	}
	return out
}

func firstKey(m map[string]string) string {
	return slices.Sorted(maps.Keys(m))[0]
}

// TestReadOnlyByDefault pins that, without an authorization policy, every
// write to OPA's API is refused before OPA sees it, with OPA's error shape,
// and changes nothing: a client cannot rewrite another client's decision.
func TestReadOnlyByDefault(t *testing.T) {
	base := startServer(t, NewConfig().WithSources(writeTemp(t, "yunikorn-configs.yaml", queuesNoNamespaces(t))))
	before := queueAnswer(t, base, "")
	if !strings.Contains(before, `"allowed":false`) {
		t.Fatalf("the application is not rejected to begin with: %s", before)
	}
	policies := policySet(t, base)
	authz := "package system.authz\nallow := true\n"
	tests := []struct {
		name, method, path, body string
	}{
		{"PUT on a document a decision reads is refused", http.MethodPut, "/v1/data/kubernetes/namespaces/default", parentQueue},
		{"PUT on the whole data document is refused", http.MethodPut, "/v1/data", `{"kubernetes":{"namespaces":{"default":` + parentQueue + `}}}`},
		{"PATCH on data is refused", http.MethodPatch, "/v1/data", `[{"op":"add","path":"/kubernetes","value":{"namespaces":{"default":` + parentQueue + `}}}]`},
		{"PUT on a bundle root is refused", http.MethodPut, "/v1/data/aclc/yunikorn", `{}`},
		{"PUT outside the bundle's roots is refused", http.MethodPut, "/v1/data/other", `{"x":1}`},
		{"DELETE of a bundle document is refused", http.MethodDelete, "/v1/data/aclc/yunikorn", ""},
		{"PUT of a policy is refused", http.MethodPut, "/v1/policies/other", "package other\nx := 1\n"},
		{"PUT of a system.authz policy is refused", http.MethodPut, "/v1/policies/system/authz", authz},
		{"DELETE of a bundle policy is refused", http.MethodDelete, "/v1/policies/" + strings.TrimPrefix(firstKey(policies), "/"), ""},
		{"POST of a policy is refused", http.MethodPost, "/v1/policies/other", "package other\nx := 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, http.DefaultClient, tt.method, base+tt.path, "", tt.body)
			if code != http.StatusMethodNotAllowed {
				t.Fatalf("%s %s: %d %s, want 405", tt.method, tt.path, code, body)
			}
			if tt.method == http.MethodPost {
				return // OPA's own 405: it has no route for it
			}
			var e struct{ Code, Message string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != "invalid_operation" || !strings.Contains(e.Message, "read-only") {
				t.Errorf("body %s (%v), want OPA's error shape saying read-only", body, err)
			}
		})
	}
	if got := queueAnswer(t, base, ""); got != before {
		t.Errorf("the refused writes changed the decision:\n%s\nwas\n%s", got, before)
	}
	if got := policySet(t, base); !maps.Equal(got, policies) {
		t.Errorf("the refused writes changed the policies: %d, was %d", len(got), len(policies))
	}
	if code, got := call(t, http.DefaultClient, http.MethodGet, base+"/v1/data/other", "", ""); code != http.StatusOK || got != "{}\n" {
		t.Errorf("the refused writes wrote data/other: %d %s", code, got)
	}
}

const authzPolicy = `package system.authz

default allow := false

# Queries, for anyone.
allow if input.method in {"GET", "POST"}

# Writes, with the operator's token.
allow if input.identity == "s3cret"
`

// TestAuthorizationPolicyAllowsWrites pins the opt-in: with a system.authz
// policy, OPA's basic authorization decides, and OPA still refuses writes
// under the bundle's roots, so that no write changes an aclc decision.
func TestAuthorizationPolicyAllowsWrites(t *testing.T) {
	base := startServer(t, NewConfig().WithSources(writeTemp(t, "yunikorn-configs.yaml", queuesNoNamespaces(t))).
		WithAuthorizationPolicy(writeTemp(t, "authz.rego", authzPolicy)))
	before := queueAnswer(t, base, "")
	tests := []struct {
		name, method, path, token, body string
		code                            int
	}{
		{"a write the policy does not allow is refused by it", http.MethodPut, "/v1/data/other", "", `{"x":1}`, http.StatusUnauthorized},
		{"a write the policy allows is made outside the bundle's roots", http.MethodPut, "/v1/data/other", "s3cret", `{"x":1}`, http.StatusNoContent},
		{"a write the policy allows is refused by OPA under a bundle root", http.MethodPut, "/v1/data/kubernetes/namespaces/default", "s3cret", parentQueue, http.StatusBadRequest},
		{"a policy over a bundle package is refused by OPA", http.MethodPut, "/v1/policies/mine", "s3cret", "package yunikorn.admission_queue\nx := 1\n", http.StatusBadRequest},
		{"a query is answered as the policy allows", http.MethodGet, "/v1/data/other/x", "", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := call(t, http.DefaultClient, tt.method, base+tt.path, tt.token, tt.body); code != tt.code {
				t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, code, body, tt.code)
			}
		})
	}
	if got := queueAnswer(t, base, ""); got != before {
		t.Errorf("a write changed the decision:\n%s\nwas\n%s", got, before)
	}
}

// slowBundle writes a bundle whose rule spin iterates 10^10 times and
// whose rule fast answers at once.
func slowBundle(t *testing.T) string {
	t.Helper()
	const src = `package slow

spin if {
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i + j < 0
}

fast := true
`
	m, err := ast.ParseModuleWithOpts("/slow.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{"slow"}
	b := bundle.Bundle{Manifest: bundle.Manifest{Revision: "slow", Roots: &roots}, Data: map[string]any{},
		Modules: []bundle.ModuleFile{{URL: "/slow.rego", Path: "/slow.rego", Raw: []byte(src), Parsed: m}}}
	b.Manifest.SetRegoVersion(ast.RegoV1)
	p := filepath.Join(t.TempDir(), "slow.tar.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := translate.WriteBundle(f, &b); err != nil {
		t.Fatal(err)
	}
	return p
}

// cpuTime is the CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestDecisionDeadlineStopsEvaluation pins that the decision timeout stops
// the evaluation itself: the answer, a 504 naming the deadline, comes from
// OPA's handler once the evaluator has returned, and the process is idle
// afterwards.
func TestDecisionDeadlineStopsEvaluation(t *testing.T) {
	const limit = 300 * time.Millisecond
	base := startServer(t, NewConfig().WithBundle(slowBundle(t)).WithDecisionTimeout(limit))
	tests := []struct {
		name, path, body string
	}{
		{"a slow decision is stopped at the deadline", "/v1/data/slow/spin", `{"input":{}}`},
		{"a slow ad-hoc query is stopped at the deadline", "/v1/query", `{"query":"data.slow.spin"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, body := call(t, http.DefaultClient, http.MethodPost, base+tt.path, "", tt.body)
			took := time.Since(start)
			var e struct{ Code, Message string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusGatewayTimeout ||
				!strings.Contains(e.Message, "decision deadline exceeded") || !strings.Contains(e.Message, limit.String()) {
				t.Fatalf("%d %s (%v), want 504 naming the deadline", code, body, err)
			}
			if took < limit || took > limit+5*time.Second {
				t.Errorf("answered after %s, want about %s", took, limit)
			}
			// Stopped, not abandoned: over a second, the process uses
			// next to no CPU (a spinning evaluation would use a second).
			cpu := cpuTime(t)
			time.Sleep(time.Second)
			if used := cpuTime(t) - cpu; used > 300*time.Millisecond {
				t.Errorf("%s of CPU in the second after the answer: the evaluation goes on", used)
			}
			start = time.Now()
			if code, body := call(t, http.DefaultClient, http.MethodPost, base+"/v1/data/slow/fast", "", `{}`); code != http.StatusOK || !strings.Contains(body, `"result":true`) {
				t.Errorf("the next decision: %d %s", code, body)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the next decision took %s", took)
			}
		})
	}
}

// keyPairFiles writes a fresh self-signed pair for 127.0.0.1 to certFile
// and keyFile (each renamed into place) and returns its CA's pool.
func keyPairFiles(t *testing.T, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	cert, caPEM, err := webhook.SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	put := func(p string, block *pem.Block) {
		if err := os.WriteFile(p+".new", pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".new", p); err != nil {
			t.Fatal(err)
		}
	}
	put(keyFile, &pem.Block{Type: "PRIVATE KEY", Bytes: key})
	put(certFile, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return pool
}

func tlsClient(pool *x509.CertPool) *http.Client {
	// A new connection each time, so that each request sees the pair in service.
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
}

// TestTLS pins that WithTLS serves HTTPS with the pair in the files, that
// a rotated pair is served without a restart, and that a pair that does
// not load leaves the last good one in service.
func TestTLS(t *testing.T) {
	old := certRefresh
	certRefresh = 20 * time.Millisecond
	defer func() { certRefresh = old }()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := keyPairFiles(t, certFile, keyFile)
	base := startServer(t, NewConfig().WithSources(writeTemp(t, "q.yaml", queues)).WithTLS(certFile, keyFile))
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("base %s", base)
	}
	if code, body := call(t, tlsClient(first), http.MethodPost, base+"/v1/data/yunikorn/queues/decision", "",
		`{"input":{"queue":"root.test","action":"admin","user":"sue","groups":[]}}`); code != http.StatusOK || !strings.Contains(body, `"allow":true`) {
		t.Errorf("over HTTPS: %d %s", code, body)
	}
	if code, _ := call(t, http.DefaultClient, http.MethodGet, "http://"+strings.TrimPrefix(base, "https://")+"/health", "", ""); code == http.StatusOK {
		t.Errorf("plain HTTP answered on the HTTPS port")
	}

	second := keyPairFiles(t, certFile, keyFile)
	served := func(pool *x509.CertPool) bool {
		resp, err := tlsClient(pool).Get(base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !served(second); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the rotated pair is not served")
		}
	}
	if err := os.WriteFile(keyFile, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * certRefresh)
	if !served(second) {
		t.Error("a key that does not load took the last good pair out of service")
	}
}

// TestNewRefusesBadSecurity pins the configurations New refuses before
// listening.
func TestNewRefusesBadSecurity(t *testing.T) {
	src := writeTemp(t, "q.yaml", queues)
	tests := []struct {
		name   string
		cfg    Config
		config bool
		want   string
	}{
		{"a negative decision timeout", NewConfig().WithDecisionTimeout(-time.Second), true, "want 0 or more"},
		{"a certificate without its key", NewConfig().WithTLS(src, ""), true, "go together"},
		{"a certificate that does not load", NewConfig().WithTLS(src, src), false, "load TLS key pair"},
		{"an authorization policy in another package", NewConfig().WithAuthorizationPolicy(writeTemp(t, "a.rego", "package authz\nallow := true\n")), true, "want package system.authz"},
		{"an authorization policy that does not parse", NewConfig().WithAuthorizationPolicy(writeTemp(t, "b.rego", "package system.authz\nallow if {\n")), false, "b.rego:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.cfg.WithSources(src).WithLogOutput(io.Discard))
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrConfig) != tt.config {
				t.Errorf("%v, want %q (ErrConfig %v)", err, tt.want, tt.config)
			}
		})
	}
}
