package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

// queueConfigNoNamespaces returns the YuniKorn configuration of
// examples/admission/queue.yaml without its Namespaces: alice's
// application in namespace default, naming root.private, is rejected
// unless default's yunikorn.apache.org/parentqueue says root.teams.
func queueConfigNoNamespaces(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/admission/queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitN(string(b), "\n---\n", 2)[0]
}

const defaultUnderTeams = `{"metadata":{"name":"default","annotations":{"yunikorn.apache.org/parentqueue":"root.teams"}}}`

// send makes one request and returns its status and body.
func send(t *testing.T, client *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// rejectedReview is alice's application in namespace default.
func rejectedReview(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/admission/reviews/pod-queue-rejected.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestServeRefusesWrites: a client that reaches aclc serve cannot turn
// another client's denial into an admission by writing the namespace the
// decision reads, nor by any other write.
func TestServeRefusesWrites(t *testing.T) {
	url, _ := startServe(t, writeFile(t, "yunikorn-configs.yaml", queueConfigNoNamespaces(t)))
	review := rejectedReview(t)
	if got := decide(t, url, "yunikorn/admission/queue", review); !strings.Contains(mustJSON(got), `"allowed":false`) {
		t.Fatalf("not rejected to begin with: %s", mustJSON(got))
	}
	tests := []struct{ name, method, path, body string }{
		{"PUT on the namespaces a decision reads is refused", http.MethodPut, "/v1/data/kubernetes/namespaces/default", defaultUnderTeams},
		{"PATCH on data is refused", http.MethodPatch, "/v1/data/kubernetes", `[{"op":"add","path":"/namespaces","value":{}}]`},
		{"DELETE of a bundle document is refused", http.MethodDelete, "/v1/data/aclc/admission_queue", ""},
		{"PUT of a system.authz policy is refused", http.MethodPut, "/v1/policies/system/authz", "package system.authz\nallow := false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := send(t, http.DefaultClient, tt.method, url+tt.path, tt.body)
			var e struct{ Code, Message string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusMethodNotAllowed || e.Code != "invalid_operation" || !strings.Contains(e.Message, "read-only") {
				t.Errorf("%d %s, want 405 saying the server is read-only", code, body)
			}
		})
	}
	if got := decide(t, url, "yunikorn/admission/queue", review); strings.Contains(mustJSON(got), `"allowed":true`) {
		t.Errorf("a refused write changed the decision: %s", mustJSON(got))
	}
}

// TestStockOPARefusesWritesUnderBundleRoots: the bundle claims every
// document its decisions read, the namespaces included when no Namespace
// source is given, so stock opa run refuses the same write.
func TestStockOPARefusesWritesUnderBundleRoots(t *testing.T) {
	opa := stockOPA(t)
	b, _ := buildCLI(t, "--portable", writeFile(t, "yunikorn-configs.yaml", queueConfigNoNamespaces(t)))
	review := `{"input":` + rejectedReview(t) + `}`
	url, before := startStockOPA(t, opa, b, "/v1/data/yunikorn/admission/queue", review)
	client := &http.Client{Timeout: 5 * time.Second}
	if !strings.Contains(before, `"allowed":false`) {
		t.Fatalf("not rejected to begin with: %s", before)
	}
	for _, path := range []string{"/v1/data/kubernetes/namespaces/default", "/v1/data/aclc/admission_queue"} {
		code, body := send(t, client, http.MethodPut, url+path, defaultUnderTeams)
		if code != http.StatusBadRequest || !strings.Contains(body, "owned by bundle") {
			t.Errorf("PUT %s: %d %s, want 400: owned by bundle", path, code, body)
		}
	}
	_, after := send(t, client, http.MethodPost, url+"/v1/data/yunikorn/admission/queue", review)
	if after != before {
		t.Errorf("the decision changed:\n%s\nwas\n%s", after, before)
	}
}

// TestServeDecisionTimeout: --decision-timeout stops an evaluation that
// runs longer and answers 504 naming the deadline.
func TestServeDecisionTimeout(t *testing.T) {
	const src = "package slow\n\nspin if {\n\tsome i in numbers.range(1, 100000)\n\tsome j in numbers.range(1, 100000)\n\ti + j < 0\n}\n"
	m, err := ast.ParseModuleWithOpts("/slow.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{"slow"}
	b := bundle.Bundle{Manifest: bundle.Manifest{Revision: "slow", Roots: &roots}, Data: map[string]any{},
		Modules: []bundle.ModuleFile{{URL: "/slow.rego", Path: "/slow.rego", Raw: []byte(src), Parsed: m}}}
	p := filepath.Join(t.TempDir(), "slow.tar.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := translate.WriteBundle(f, &b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	url, _ := startServe(t, "--decision-timeout", "200ms", "--bundle", p)
	start := time.Now()
	code, body := send(t, &http.Client{Timeout: 30 * time.Second}, http.MethodPost, url+"/v1/data/slow/spin", `{}`)
	if code != http.StatusGatewayTimeout || !strings.Contains(body, "decision deadline exceeded: evaluation stopped after 200ms") {
		t.Errorf("%d %s, want 504 naming the deadline", code, body)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("answered after %s", took)
	}
}

// TestServeTLS: --tls-cert and --tls-key serve HTTPS.
func TestServeTLS(t *testing.T) {
	cert, caPEM, err := webhook.SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile := writeFile(t, "tls.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})))
	keyFile := writeFile(t, "tls.key", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})))
	url, _ := startServe(t, "--tls-cert", certFile, "--tls-key", keyFile, writeFile(t, "queues.yaml", serveQueues))
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("listening on %s, want https", url)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code, body := send(t, client, http.MethodPost, url+"/v1/data/yunikorn/queues/decision",
		`{"input":{"queue":"root.test","action":"admin","user":"sue","groups":[]}}`); code != http.StatusOK || !strings.Contains(body, `"allow":true`) {
		t.Errorf("over HTTPS: %d %s", code, body)
	}
}
