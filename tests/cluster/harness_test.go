package cluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// freePort asks the kernel for a free loopback port. Another process
// could take it before it is used; on loopback, in a test, that is rare.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a child in a process group of its own, stopped (the whole
// group) when the test ends.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
	once sync.Once
}

// start runs argv with its output in a log file under dir; Cleanup stops
// it with SIGTERM, then SIGKILL after a grace period.
func start(t *testing.T, dir, name string, argv ...string) *process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("--- last lines of %s:\n%s", name, tail(logPath, 40))
		}
	})
	return p
}

// stop sends SIGTERM to the process group and waits, then SIGKILL.
func (p *process) stop(t *testing.T) {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			t.Logf("%s did not stop on SIGTERM; killing it", p.name)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
	})
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// eventually retries f every interval until it succeeds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pki is a CA and what it signed, PEM-encoded, written under dir.
type pki struct {
	caPEM    []byte
	caFile   string
	certFile string
	keyFile  string
	saPub    string
	saKey    string
}

func newPKI(t *testing.T, dir string) *pki {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aclc-e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default.svc"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		caFile:   filepath.Join(dir, "ca.crt"),
		certFile: filepath.Join(dir, "apiserver.crt"),
		keyFile:  filepath.Join(dir, "apiserver.key"),
		saPub:    filepath.Join(dir, "sa.pub"),
		saKey:    filepath.Join(dir, "sa.key"),
	}
	for path, data := range map[string][]byte{
		p.caFile:   p.caPEM,
		p.certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		p.keyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		p.saPub:    pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
		p.saKey:    pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// user is a static-token user of the API server.
type user struct {
	name, token string
	groups      []string
}

// The users of the run: an administrator, two people, and the identity
// aclc reads the configuration with (given the chart's RBAC).
var (
	admin = user{"admin", "admin-token", []string{"system:masters"}}
	alice = user{"alice", "alice-token", []string{"devs"}}
	bob   = user{"bob", "bob-token", []string{"ops"}}
	aclcU = user{"aclc", "aclc-token", nil}
	// many is a user in 4,000 groups: a user.info of about 120 KB.
	many = user{"many", "many-token", manyGroups()}
)

func manyGroups() []string {
	gs := []string{"devs"}
	for i := 1; i < 4000; i++ {
		gs = append(gs, fmt.Sprintf("group-%04d-of-a-large-directory", i))
	}
	return gs
}

func tokenFile(t *testing.T, dir string, users ...user) string {
	t.Helper()
	var b strings.Builder
	for _, u := range users {
		fmt.Fprintf(&b, "%s,%s,%s,\"%s\"\n", u.token, u.name, u.name, strings.Join(u.groups, ","))
	}
	p := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// apiServer is etcd and kube-apiserver on loopback.
type apiServer struct {
	url  string
	pki  *pki
	dir  string
	proc *process
}

// startAPIServer starts etcd and kube-apiserver, with extra flags for the
// API server after the harness's own.
func startAPIServer(t *testing.T, etcdBin, kasBin string, extra ...string) *apiServer {
	t.Helper()
	dir := t.TempDir()
	p := newPKI(t, dir)
	etcdPort, peerPort := freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	start(t, dir, "etcd", etcdBin,
		"--name", "e2e", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL, "--unsafe-no-fsync", "--log-level", "warn")
	eventually(t, 60*time.Second, "etcd healthy", func() error {
		resp, err := http.Get(etcdURL + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("etcd /health: %d", resp.StatusCode)
		}
		return nil
	})
	port := freePort(t)
	s := &apiServer{url: "https://127.0.0.1:" + strconv.Itoa(port), pki: p, dir: dir}
	s.proc = start(t, dir, "kube-apiserver", append([]string{kasBin,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", p.certFile, "--tls-private-key-file", p.keyFile, "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokenFile(t, dir, admin, alice, bob, aclcU, many),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", p.saPub, "--service-account-signing-key-file", p.saKey,
		"--service-cluster-ip-range", "10.96.0.0/24",
		"--endpoint-reconciler-type", "none",
		// No controller-manager makes the default ServiceAccounts; pods
		// never run here anyway.
		"--disable-admission-plugins", "ServiceAccount",
		"--profiling=false"}, extra...)...)
	hc := s.httpClient()
	eventually(t, 180*time.Second, "kube-apiserver ready", func() error {
		if s.proc.exited() {
			t.Fatalf("kube-apiserver exited:\n%s", tail(s.proc.log, 30))
		}
		req, _ := http.NewRequest(http.MethodGet, s.url+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+admin.token)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz %d: %s", resp.StatusCode, b)
		}
		return nil
	})
	return s
}

func (s *apiServer) httpClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.pki.caPEM)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func (s *apiServer) restConfig(u user) *rest.Config {
	return &rest.Config{Host: s.url, BearerToken: u.token, TLSClientConfig: rest.TLSClientConfig{CAData: s.pki.caPEM}, Timeout: 30 * time.Second}
}

func (s *apiServer) client(t *testing.T, u user) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.restConfig(u))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// warnings records the warnings the API server sends a client
// (Warning: 299 headers), such as an admission webhook's.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// take returns the warnings recorded since the last take.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

// warned is a client for u whose warnings are recorded, as kubectl
// would print them.
func (s *apiServer) warned(t *testing.T, u user) (kubernetes.Interface, *warnings) {
	t.Helper()
	w := &warnings{}
	cfg := s.restConfig(u)
	cfg.WarningHandler = w
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

// impersonating is the administrator acting as another identity, such as
// a controller's ServiceAccount, which no token here belongs to.
func (s *apiServer) impersonating(t *testing.T, name string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := s.restConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: groups}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeconfig writes a kubeconfig for u and returns its path.
func (s *apiServer) kubeconfig(t *testing.T, u user) string {
	t.Helper()
	p := filepath.Join(s.dir, "kubeconfig-"+u.name)
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: %s}
current-context: e2e
`, s.url, s.pki.caFile, u.name, u.token, u.name)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs aclc to completion with a bounded time, returning its exit
// status and output.
func run(t *testing.T, stdin string, argv ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("%v: %v\n%s", argv, err, out.String())
	return -1, ""
}

// startWebhook starts aclc webhook on loopback with a throw-away CA, reading
// the configuration from the cluster as kubeconfig's identity, and waits
// until it is ready: the process, its URL, a client that trusts its CA, and
// the CA.
func startWebhook(t *testing.T, dir, aclc, kubeconfig string, extra ...string) (*process, string, *http.Client, []byte) {
	t.Helper()
	port := freePort(t)
	caOut := filepath.Join(dir, "webhook-ca.pem")
	proc := start(t, dir, "aclc-webhook", append([]string{aclc, "webhook", "--from-cluster", "--kubeconfig", kubeconfig,
		"--namespace", yunikornNS, "--addr", "127.0.0.1:" + strconv.Itoa(port), "--self-signed", "--ca-out", caOut}, extra...)...)
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	var client *http.Client
	eventually(t, 120*time.Second, "aclc webhook ready", func() error {
		if proc.exited() {
			t.Fatalf("aclc webhook exited:\n%s", tail(proc.log, 30))
		}
		pemBytes, err := os.ReadFile(caOut)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pemBytes)
		client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		_, err = get(client, url+"/readyz")
		return err
	})
	caPEM, err := os.ReadFile(caOut)
	if err != nil {
		t.Fatal(err)
	}
	return proc, url, client, caPEM
}
