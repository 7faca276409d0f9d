package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/aclc-dev/aclc/pkg/opsmetrics/opsmetricstest"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

const admissionSettings = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: yunikorn
data:
  admissionController.accessControl.externalUsers: "^system:serviceaccount:airflow:airflow-worker$"
`

// syncBuffer is written by the command while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWebhookUsage(t *testing.T) {
	settings := writeFile(t, "yunikorn-configs.yaml", admissionSettings)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no TLS option", []string{settings}, exitUsage, "over HTTPS only"},
		{"both TLS options", []string{"--self-signed", "--tls-cert", "c.pem", "--tls-key", "k.pem", settings}, exitUsage, "not both"},
		{"a certificate without key", []string{"--tls-cert", "c.pem", settings}, exitUsage, "go together"},
		{"a key without certificate", []string{"--tls-key", "k.pem", settings}, exitUsage, "go together"},
		{"--ca-out without --self-signed", []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--ca-out", "ca.pem", settings}, exitUsage, "go with --self-signed"},
		{"no source", []string{"--self-signed"}, exitUsage, "no SOURCE"},
		{"an unknown engine", []string{"--self-signed", "--engine", "http", settings}, exitUsage, `unknown --engine "http"`},
		{"an unknown flag", []string{"--self-signed", "--nope", settings}, exitUsage, "unknown flag: --nope"},
		{"a timeout the API server refuses", []string{"--self-signed", "--timeout-seconds", "0", settings}, exitUsage, "--timeout-seconds 0: want 1 to 30"},
		{"a metrics address without a port", []string{"--self-signed", "--metrics-addr", "9090", settings}, exitUsage, `--metrics-addr "9090": want host:port`},
		{"help", []string{"-h"}, exitOK, "aclc webhook manifests"},
		{"a source without YuniKorn configuration is refused, naming the file",
			[]string{"--self-signed", "../../examples/vov/acls.yaml"}, exitError,
			"no YuniKorn configuration in ../../examples/vov/acls.yaml"},
		{"a broken source is refused", []string{"--self-signed", writeFile(t, "bad.yaml", "admissionController.x: [\n")}, exitError, "bad.yaml"},
		{"a missing key pair is refused before listening", []string{"--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem", settings}, exitError, "load TLS key pair"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"webhook"}, tt.args...)...)
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
			if strings.Contains(stdout, "listening") {
				t.Errorf("listened: %s", stdout)
			}
		})
	}
}

// TestWebhookServes runs 'aclc webhook --self-signed' on a free port with
// the real Wasm engine, sends a real AdmissionReview over TLS trusting only
// the CA written by --ca-out, applies the patch, and stops it as SIGTERM
// would.
func TestWebhookServes(t *testing.T) {
	settings := writeFile(t, "yunikorn-configs.yaml", admissionSettings)
	caFile := filepath.Join(t.TempDir(), "ca.pem")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := webhookContext
	webhookContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { webhookContext = old }()

	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"webhook", "--self-signed", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--ca-out", caFile, "--reload-interval", "20ms", "--decision-logs", settings}, &stdout, &stderr)
	}()

	addrRE := regexp.MustCompile(`listening on (https://127\.0\.0\.1:\d+)`)
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; {
		if m := addrRE.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exited %d before listening: %s %s", code, stdout.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 60s: %s %s", stdout.String(), stderr.String())
		}
	}

	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("--ca-out wrote no certificate: %q", caPEM)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := client.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
	podJSON, _ := json.Marshal(pod)
	body, _ := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       "cli-1",
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: "team-a",
			Operation: admissionv1.Create,
			UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"devs"}},
			Object:    runtime.RawExtension{Raw: podJSON},
		},
	})
	resp, err := client.Post(url+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(b, &ar); err != nil || ar.Response == nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	if !ar.Response.Allowed || ar.Response.UID != "cli-1" {
		t.Fatalf("response %+v", ar.Response)
	}
	patch, err := jsonpatch.DecodePatch(ar.Response.Patch)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := patch.Apply(podJSON)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	json.Unmarshal(patched, &got)
	if v := got.Annotations["yunikorn.apache.org/user.info"]; v != `{"user":"alice","groups":["devs"]}` {
		t.Errorf("user.info = %q", v)
	}

	// The settings change on disk: alice's group may now pre-set
	// user.info. The webhook reloads without a restart.
	preset := func(uid string) bool {
		t.Helper()
		p := pod.DeepCopy()
		p.Annotations = map[string]string{"yunikorn.apache.org/user.info": `{"user":"sue"}`}
		raw, _ := json.Marshal(p)
		body, _ := json.Marshal(&admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID: types.UID(uid), Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "team-a",
				Operation: admissionv1.Create, UserInfo: authenticationv1.UserInfo{Username: "alice", Groups: []string{"devs"}},
				Object: runtime.RawExtension{Raw: raw},
			},
		})
		resp, err := client.Post(url+"/mutate", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ar admissionv1.AdmissionReview
		if err := json.NewDecoder(resp.Body).Decode(&ar); err != nil || ar.Response == nil {
			t.Fatalf("answer: %v", err)
		}
		return ar.Response.Allowed
	}
	get := func(path string) string {
		t.Helper()
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if preset("cli-2") {
		t.Fatal("alice may pre-set user.info before the change")
	}
	if err := translate.WriteFileAtomic(settings, []byte(admissionSettings+"  admissionController.accessControl.externalGroups: \"^devs$\"\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !preset("cli-3"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the changed settings were not served: %s", stderr.String())
		}
	}
	// A broken edit keeps the last good settings and says so.
	if err := translate.WriteFileAtomic(settings, []byte(admissionSettings+"  admissionController.accessControl.externalGroups: [\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(get("/metrics"), "aclc_webhook_reload_failures_total 1"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broken edit was not reported: %s", get("/metrics"))
		}
	}
	if r := get("/readyz"); !strings.Contains(r, "the last reload failed") {
		t.Errorf("/readyz = %q", r)
	}
	if !preset("cli-4") {
		t.Error("a broken edit changed the decision: the last good settings must stay")
	}
	m, _, err := opsmetricstest.Parse(strings.NewReader(get("/metrics")))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	for series, want := range map[string]float64{
		"aclc_webhook_reloads_total":                                  1,
		"aclc_webhook_reload_failures_total":                          1,
		"aclc_webhook_last_reload_failed":                             1,
		`aclc_webhook_decisions_total{allowed="true",path="/mutate"}`: 3,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	// cli-2 is denied, and cli-3 until the change is served.
	if m[`aclc_webhook_decisions_total{allowed="false",path="/mutate"}`] < 1 {
		t.Errorf("denials not counted: %v", m)
	}
	if m["go_goroutines"] <= 0 || m["aclc_webhook_last_reload_success_timestamp_seconds"] <= 0 {
		t.Errorf("no Go runtime metrics or last good load time in the scrape")
	}
	// --metrics-addr: the same counters in plain HTTP, and no reviews.
	metricsURL := regexp.MustCompile(`metrics on (http://127\.0\.0\.1:\d+/metrics)`).FindStringSubmatch(stdout.String())
	if metricsURL == nil {
		t.Fatalf("no metrics address in %q", stdout.String())
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	defer plain.CloseIdleConnections()
	resp, err = plain.Get(metricsURL[1])
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "aclc_webhook_reload_failures_total 1") {
		t.Errorf("--metrics-addr /metrics: %d %.200q", resp.StatusCode, b)
	}
	resp, err = plain.Post(strings.TrimSuffix(metricsURL[1], "/metrics")+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("--metrics-addr answered /mutate with %d, want 404", resp.StatusCode)
	}
	// The logs are JSON lines, with one decision line per review.
	reviews := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line that is not JSON: %q", line)
			continue
		}
		if rec["msg"] != "Decision Log" {
			continue
		}
		uid, _ := rec["uid"].(string)
		reviews[uid]++
		if _, ok := rec["allowed"].(bool); !ok || rec["path"] != "/mutate" {
			t.Errorf("decision line %q", line)
		}
		if d, ok := rec["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("decision line without duration_ms: %q", line)
		}
	}
	if reviews["cli-1"] != 1 || reviews["cli-2"] != 1 || reviews["cli-4"] != 1 || reviews["cli-3"] < 1 {
		t.Errorf("decision lines by uid: %v", reviews)
	}

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after the signal, want 0; stderr %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop after the signal")
	}
	if !strings.Contains(stdout.String(), "stopped") {
		t.Errorf("stdout %q", stdout.String())
	}
}

func TestWebhookManifests(t *testing.T) {
	_, caPEM, err := webhook.SelfSigned([]string{"aclc-webhook.yunikorn.svc"})
	if err != nil {
		t.Fatal(err)
	}
	caFile := writeFile(t, "ca.pem", string(caPEM))
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{"", "apps", "batch"},
			APIVersions: []string{"v1"},
			Resources:   []string{"pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs", "replicationcontrollers"},
		},
	}, {
		// The guard: a pods/status UPDATE can change the identity.
		Operations: []admissionregistrationv1.OperationType{"UPDATE"},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{""},
			APIVersions: []string{"v1"},
			Resources:   []string{"pods/status"},
		},
	}}
	type common struct {
		path, policy, ns string
		port             int32
		ca               []byte
		nsSelector       bool
		cfg              admissionregistrationv1.WebhookClientConfig
		sideEffects      *admissionregistrationv1.SideEffectClass
		versions         []string
		rules            []admissionregistrationv1.RuleWithOperations
	}
	check := func(t *testing.T, got common, want common) {
		t.Helper()
		svc := got.cfg.Service
		if svc == nil || svc.Name != "aclc-webhook" || svc.Namespace != want.ns || svc.Path == nil || *svc.Path != want.path || svc.Port == nil || *svc.Port != want.port {
			t.Errorf("service %+v", svc)
		}
		if !bytes.Equal(got.cfg.CABundle, want.ca) {
			t.Errorf("caBundle %q, want the CA file", got.cfg.CABundle)
		}
		if got.policy != want.policy {
			t.Errorf("failurePolicy %s, want %s", got.policy, want.policy)
		}
		if got.sideEffects == nil || *got.sideEffects != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("sideEffects %v", got.sideEffects)
		}
		if len(got.versions) != 1 || got.versions[0] != "v1" {
			t.Errorf("admissionReviewVersions %v", got.versions)
		}
		gr, _ := json.Marshal(got.rules)
		wr, _ := json.Marshal(rules)
		if !bytes.Equal(gr, wr) {
			t.Errorf("rules %s\nwant %s", gr, wr)
		}
		if got.nsSelector != want.nsSelector {
			t.Errorf("namespaceSelector present %v, want %v", got.nsSelector, want.nsSelector)
		}
	}

	t.Run("mutating, YuniKorn's registration, in the chart's namespace by default", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "webhook", "manifests", "--ca-file", caFile)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.UnmarshalStrict([]byte(stdout), &c); err != nil {
			t.Fatalf("not a MutatingWebhookConfiguration: %v\n%s", err, stdout)
		}
		if c.Kind != "MutatingWebhookConfiguration" || c.APIVersion != "admissionregistration.k8s.io/v1" || len(c.Webhooks) != 1 {
			t.Fatalf("%+v", c)
		}
		w := c.Webhooks[0]
		check(t, common{cfg: w.ClientConfig, policy: string(*w.FailurePolicy), sideEffects: w.SideEffects, versions: w.AdmissionReviewVersions, rules: w.Rules, nsSelector: w.NamespaceSelector != nil},
			common{ns: "aclc-system", path: "/mutate", port: 443, policy: "Fail", ca: caPEM, nsSelector: true})
		if w.TimeoutSeconds == nil || *w.TimeoutSeconds != 3 {
			t.Errorf("timeoutSeconds %v, want 3", w.TimeoutSeconds)
		}
		for _, want := range []string{"Ignore (YuniKorn's default)", `user "nobody"`, "Fail: nothing", "can never be skipped", "Do not also register"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("comments lack %q", want)
			}
		}
	})

	t.Run("validating with Fail leaves its own namespace out", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "webhook", "manifests", "--type", "validating", "--failure-policy", "Fail", "--service-namespace", "aclc", "--port", "8443")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var c admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.UnmarshalStrict([]byte(stdout), &c); err != nil {
			t.Fatalf("not a ValidatingWebhookConfiguration: %v\n%s", err, stdout)
		}
		if c.Kind != "ValidatingWebhookConfiguration" || len(c.Webhooks) != 1 {
			t.Fatalf("%+v", c)
		}
		w := c.Webhooks[0]
		check(t, common{cfg: w.ClientConfig, policy: string(*w.FailurePolicy), sideEffects: w.SideEffects, versions: w.AdmissionReviewVersions, rules: w.Rules, nsSelector: w.NamespaceSelector != nil},
			common{ns: "aclc", path: "/validate", port: 8443, policy: "Fail", nsSelector: true})
		sel, _ := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
		if sel.String() != "kubernetes.io/metadata.name notin (aclc)" {
			t.Errorf("namespaceSelector %s", sel)
		}
		if !strings.Contains(stdout, "# caBundle:") {
			t.Errorf("no caBundle hint without --ca-file")
		}
	})

	t.Run("queue registers the placement check", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "webhook", "manifests", "--type", "queue", "--ca-file", caFile)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var c admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.UnmarshalStrict([]byte(stdout), &c); err != nil {
			t.Fatalf("not a ValidatingWebhookConfiguration: %v\n%s", err, stdout)
		}
		if c.Kind != "ValidatingWebhookConfiguration" || c.Name != "aclc-yunikorn-queue" || len(c.Webhooks) != 1 || c.Webhooks[0].Name != "validate-queue.aclc-webhook.aclc-system.svc" {
			t.Fatalf("%+v", c)
		}
		w := c.Webhooks[0]
		check(t, common{cfg: w.ClientConfig, policy: string(*w.FailurePolicy), sideEffects: w.SideEffects, versions: w.AdmissionReviewVersions, rules: w.Rules, nsSelector: w.NamespaceSelector != nil},
			common{ns: "aclc-system", path: "/validate-queue", port: 443, policy: "Ignore", ca: caPEM})
	})

	refused := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an unknown failure policy", []string{"--failure-policy", "ignore"}, exitUsage, `--failure-policy "ignore"`},
		{"an unknown type", []string{"--type", "both"}, exitUsage, `--type "both"`},
		{"a timeout the API server refuses", []string{"--timeout-seconds", "31"}, exitUsage, "--timeout-seconds 31"},
		{"a service name that is not a DNS label", []string{"--service-name", "Bad_Name"}, exitUsage, `--service-name "Bad_Name"`},
		{"a port out of range", []string{"--port", "0"}, exitUsage, "--port 0"},
		{"arguments", []string{"extra"}, exitUsage, "unexpected arguments"},
		{"a CA file that is a key", []string{"--ca-file", writeFile(t, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}})))}, exitError, "certificates only"},
		{"a CA file without PEM", []string{"--ca-file", writeFile(t, "ca.txt", base64.StdEncoding.EncodeToString(caPEM))}, exitError, "no PEM certificate"},
		{"a missing CA file", []string{"--ca-file", "/nonexistent/ca.pem"}, exitError, "/nonexistent/ca.pem"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"webhook", "manifests"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d (want %d), stderr %q (want %q), stdout %q", code, tt.code, stderr, tt.want, stdout)
			}
		})
	}
}

func TestSelfSignedHosts(t *testing.T) {
	tests := []struct {
		addr, sans string
		want       string
	}{
		{"127.0.0.1:8443", "", "localhost,127.0.0.1,::1"},
		{":8443", "", "localhost,127.0.0.1,::1"},
		{"0.0.0.0:8443", "aclc-webhook.yunikorn.svc, 10.0.0.7", "localhost,127.0.0.1,::1,aclc-webhook.yunikorn.svc,10.0.0.7"},
		{"192.168.1.5:0", "", "localhost,127.0.0.1,::1,192.168.1.5"},
		{"webhook.local:8443", "webhook.local", "localhost,127.0.0.1,::1,webhook.local"},
	}
	for _, tt := range tests {
		if got := strings.Join(selfSignedHosts(tt.addr, tt.sans), ","); got != tt.want {
			t.Errorf("selfSignedHosts(%q, %q) = %s, want %s", tt.addr, tt.sans, got, tt.want)
		}
	}
}

// TestWebhookSelfSignedServiceNames is the chartless in-cluster set-up:
// --san gives the self-signed certificate the DNS names the API server
// dials for the Service (<service>.<namespace>.svc), and the sources are
// YuniKorn's two ConfigMaps mounted as directories, one of them absent
// (an optional volume: an empty directory), as charts/aclc mounts them.
func TestWebhookSelfSignedServiceNames(t *testing.T) {
	mounts := t.TempDir()
	defaults := filepath.Join(mounts, "yunikorn-defaults")
	configs := filepath.Join(mounts, "yunikorn-configs")
	for _, d := range []string{defaults, configs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(configs, "admissionController.accessControl.externalUsers"), []byte("^system:serviceaccount:airflow:airflow-worker$"), 0o644); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := webhookContext
	webhookContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { webhookContext = old }()

	svcNames := []string{"aclc-webhook.yunikorn.svc", "aclc-webhook.yunikorn.svc.cluster.local"}
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"webhook", "--self-signed", "--san", strings.Join(svcNames, ","), "--addr", "127.0.0.1:0", "--ca-out", caFile, "--reload-interval", "0", defaults, configs}, &stdout, &stderr)
	}()
	addrRE := regexp.MustCompile(`listening on https://(127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(60 * time.Second); addr == ""; {
		if m := addrRE.FindStringSubmatch(stdout.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exited %d before listening: %s %s", code, stdout.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 60s: %s %s", stdout.String(), stderr.String())
		}
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("--ca-out wrote no certificate: %q", caPEM)
	}
	// The API server dials the Service's name and checks the certificate
	// against caBundle: the same check, with the name as ServerName.
	for _, name := range svcNames {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: name})
		if err != nil {
			t.Fatalf("TLS as %s: %v", name, err)
		}
		leaf := conn.ConnectionState().PeerCertificates[0]
		conn.Close()
		if err := leaf.VerifyHostname(name); err != nil {
			t.Errorf("certificate DNS names %v: %v", leaf.DNSNames, err)
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// aclc webhook --help names every path the webhook serves.
func TestWebhookHelpListsEveryPath(t *testing.T) {
	_, help, _ := runCLI(t, "", "webhook", "--help")
	// The text is wrapped: words are compared, not lines.
	help = strings.Join(strings.Fields(help), " ")
	for _, tt := range []struct{ name, path string }{
		{"the mutating review", "/mutate "},
		{"the validating review", "/validate "},
		{"the queue review", "/validate-queue "},
		{"the ConfigMap review", "/validate-config "},
		{"liveness", "/healthz"},
		{"readiness", "/readyz"},
		{"metrics", "/metrics"},
		{"every other path is 404", "every other path is 404"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(help, tt.path) {
				t.Errorf("webhook --help does not name %q:\n%s", tt.path, help)
			}
		})
	}
}

// --static-url writes each type's configuration as the API server loads it
// from a file at start: named with the reserved suffix, calling the URL
// (no Service, which a static configuration may not name), strictly a
// typed admissionregistration/v1 object.
func TestWebhookManifestsStatic(t *testing.T) {
	for _, typ := range []string{"mutating", "validating", "queue", "config"} {
		code, stdout, stderr := runCLI(t, "", "webhook", "manifests", "--type", typ, "--static-url", "https://10.0.0.5:8443/")
		if code != exitOK {
			t.Fatalf("%s: exit %d, %s", typ, code, stderr)
		}
		var name string
		var urls []*string
		var services int
		if typ == "mutating" {
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict([]byte(stdout), &c); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			name = c.Name
			for _, w := range c.Webhooks {
				urls = append(urls, w.ClientConfig.URL)
				if w.ClientConfig.Service != nil {
					services++
				}
			}
		} else {
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict([]byte(stdout), &c); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			name = c.Name
			for _, w := range c.Webhooks {
				urls = append(urls, w.ClientConfig.URL)
				if w.ClientConfig.Service != nil {
					services++
				}
			}
		}
		if !strings.HasSuffix(name, ".static.k8s.io") || len(urls) != 1 || urls[0] == nil || !strings.HasPrefix(*urls[0], "https://10.0.0.5:8443/") || services != 0 {
			t.Errorf("%s: name %s, %d webhooks, services %d", typ, name, len(urls), services)
		}
	}
	for _, bad := range []string{"http://10.0.0.5", "https://", "https://h/path", "https://h?x=1"} {
		if code, _, stderr := runCLI(t, "", "webhook", "manifests", "--static-url", bad); code != exitUsage || !strings.Contains(stderr, "--static-url") {
			t.Errorf("--static-url %s: exit %d, %s", bad, code, stderr)
		}
	}
}
