package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// fakeEngine answers the admission entry point with answer; the default
// allows with a one-op patch and echoes the request's uid, in the key order
// OPA's Wasm writes (response first).
type fakeEngine struct {
	answer func(ctx context.Context, input []byte) (json.RawMessage, error)

	mu     sync.Mutex
	inputs [][]byte
}

func (f *fakeEngine) Name() string { return "fake" }

func (f *fakeEngine) Close(context.Context) error { return nil }

func (f *fakeEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	if ep != translate.EntrypointAdmissionGuard {
		return nil, fmt.Errorf("%w %q", engine.ErrUnknownEntrypoint, ep)
	}
	if !bytes.Contains(input, []byte(probeUID)) {
		f.mu.Lock()
		f.inputs = append(f.inputs, bytes.Clone(input))
		f.mu.Unlock()
	}
	if f.answer != nil {
		return f.answer(ctx, input)
	}
	return allowWithPatch(input), nil
}

// calls is the number of reviews the engine was asked, probes aside.
func (f *fakeEngine) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.inputs)
}

// seen returns a copy of the inputs the engine was given so far.
func (f *fakeEngine) seen() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.inputs...)
}

// fakePatch is the base64 of [{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}].
const fakePatch = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2Fubm90YXRpb25zIiwidmFsdWUiOnsiYSI6ImIifX1d"

func requestUID(input []byte) string {
	var ar struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	json.Unmarshal(input, &ar)
	return ar.Request.UID
}

func allowWithPatch(input []byte) json.RawMessage {
	uid, _ := json.Marshal(requestUID(input))
	return json.RawMessage(`{"response": {"patch": "` + fakePatch + `", "patchType": "JSONPatch", "uid": ` + string(uid) + `, "allowed": true}, "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}`)
}

func denyWith(msg string) func(context.Context, []byte) (json.RawMessage, error) {
	return func(_ context.Context, input []byte) (json.RawMessage, error) {
		b, _ := json.Marshal(map[string]any{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "response": map[string]any{
			"uid": requestUID(input), "allowed": false, "status": map[string]any{"metadata": map[string]any{}, "message": msg},
		}})
		return b, nil
	}
}

// discard keeps expected error logs out of the test output.
var discard = slog.New(slog.DiscardHandler)

// review is an AdmissionReview for a Pod CREATE by user in groups, built
// with the Kubernetes API types, as the API server sends it.
func review(t testing.TB, uid, user string, groups []string, pod *corev1.Pod) []byte {
	t.Helper()
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	obj, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID(uid),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Name:      pod.Name,
			Namespace: pod.Namespace,
			Operation: admissionv1.Create,
			UserInfo:  authenticationv1.UserInfo{Username: user, Groups: groups},
			Object:    runtime.RawExtension{Raw: obj},
		},
	}
	b, err := json.Marshal(&ar)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func samplePod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "team-a", Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
}

// testSettings are admission settings with one front-end user that may set
// user.info itself.
const testSettings = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: yunikorn
data:
  admissionController.accessControl.externalUsers: "^system:serviceaccount:airflow:airflow-worker$"
`

var (
	wasmOnce sync.Once
	wasmEng  engine.Engine
	wasmErr  error
)

// wasmEngine is the real engine: testSettings compiled to a Wasm bundle
// and run on aclc's wazero host. It is built once per test binary.
func wasmEngine(tb testing.TB) engine.Engine {
	tb.Helper()
	wasmOnce.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "aclc-webhook-test")
		if err != nil {
			wasmErr = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "yunikorn-configs.yaml")
		if wasmErr = os.WriteFile(path, []byte(testSettings), 0o644); wasmErr != nil {
			return
		}
		s, err := translate.LoadSources([]string{path}, translate.KindAuto)
		if err != nil {
			wasmErr = err
			return
		}
		if s.Admission() == nil {
			wasmErr = errors.New("test settings carry no admission settings")
			return
		}
		if s, wasmErr = s.WithGroupResolution("", false); wasmErr != nil {
			return
		}
		b, err := translate.WasmBundle(ctx, s)
		if err != nil {
			wasmErr = err
			return
		}
		raw, err := translate.BundleBytes(b)
		if err != nil {
			wasmErr = err
			return
		}
		wasmEng, wasmErr = engine.NewWasm(ctx, raw, wasm.NewConfig(), engine.NewGroupCache(s.Groups()))
	})
	if wasmErr != nil {
		tb.Fatalf("build the wasm engine: %v", wasmErr)
	}
	return wasmEng
}

// running is a server serving HTTPS on 127.0.0.1 with a self-signed
// certificate, and a client that trusts only its CA.
type running struct {
	srv    *Server
	url    string
	client *http.Client
	cancel context.CancelFunc
	done   chan error
}

func startTLS(tb testing.TB, eng engine.Engine, cfg Config) *running {
	tb.Helper()
	cert, caPEM, err := SelfSigned([]string{"127.0.0.1", "localhost"})
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		tb.Fatal("CA PEM does not parse")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := New(eng, cfg.WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}))
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{
		srv:    srv,
		url:    "https://" + ln.Addr().String(),
		cancel: cancel,
		done:   make(chan error, 1),
		client: &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				TLSClientConfig:     &tls.Config{RootCAs: pool},
				MaxIdleConns:        1024,
				MaxIdleConnsPerHost: 1024,
				IdleConnTimeout:     30 * time.Second,
			},
		},
	}
	go func() { r.done <- srv.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		r.stop(tb)
		r.client.CloseIdleConnections()
	})
	r.waitReady(tb)
	return r
}

func (r *running) waitReady(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := r.client.Get(r.url + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-r.done:
			tb.Fatalf("server stopped before it was ready: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	tb.Fatal("server not ready after 10s")
}

// stop cancels the server once and returns what Serve returned.
func (r *running) stop(tb testing.TB) error {
	tb.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(30 * time.Second):
		tb.Fatal("server did not stop within 30s")
		return nil
	}
}

func (r *running) post(tb testing.TB, path string, body []byte) (*http.Response, []byte) {
	tb.Helper()
	resp, err := r.client.Post(r.url+path, "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, b
}
