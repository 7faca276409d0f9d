package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowEngine blocks every review (not the probe) until release is closed.
func slowEngine() (*fakeEngine, chan struct{}, chan struct{}) {
	started, release := make(chan struct{}, 16), make(chan struct{})
	eng := &fakeEngine{}
	eng.answer = func(_ context.Context, in []byte) (json.RawMessage, error) {
		if requestUID(in) != probeUID {
			started <- struct{}{}
			<-release
		}
		return allowWithPatch(in), nil
	}
	return eng, started, release
}

// TestGracefulShutdown: cancelling the context stops new work, turns
// /readyz to 503, lets the in-flight request finish, and only then does
// Serve return.
func TestGracefulShutdown(t *testing.T) {
	eng, started, release := slowEngine()
	// A deadline beyond the test's waits: the request is to finish by
	// itself, not to be denied at the deadline.
	r := startTLS(t, eng, NewConfig().WithDecisionTimeout(time.Minute).WithWriteTimeout(2*time.Minute).WithLogger(discard))

	type result struct {
		code int
		body string
		err  error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := r.client.Post(r.url+"/mutate", "application/json", strings.NewReader(podReview))
		if err != nil {
			inflight <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		inflight <- result{resp.StatusCode, string(b), err}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the engine")
	}

	r.cancel()
	deadline := time.Now().Add(5 * time.Second)
	for get(t, r.srv.Handler(), "GET", "/readyz").Code != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("/readyz still 200 after cancel")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-r.done:
		t.Fatalf("Serve returned %v while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	// The listener is closed: a new connection is refused.
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(r.url, "https://"), time.Second); err == nil {
		c.Close()
		t.Error("a new connection was accepted after cancel")
	}

	close(release)
	res := <-inflight
	if res.err != nil || res.code != 200 || !strings.Contains(res.body, `"allowed":true`) {
		t.Errorf("in-flight request: %d %q %v, want 200 allowed", res.code, res.body, res.err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Serve = %v, want nil after a graceful shutdown", err)
		}
		close(r.done)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the in-flight request finished")
	}
}

// TestShutdownGraceRunsOut: a request slower than the grace period is cut
// off and Serve says so.
func TestShutdownGraceRunsOut(t *testing.T) {
	eng, started, release := slowEngine()
	defer close(release)
	r := startTLS(t, eng, NewConfig().WithShutdownGrace(50*time.Millisecond).WithLogger(discard))
	go func() {
		resp, err := r.client.Post(r.url+"/mutate", "application/json", strings.NewReader(podReview))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	r.cancel()
	select {
	case err := <-r.done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve = %v, want a shutdown deadline error", err)
		}
		close(r.done)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the grace period")
	}
}

func TestServeRefuses(t *testing.T) {
	cert, _, err := SelfSigned([]string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	withCert := &tls.Config{Certificates: []tls.Certificate{cert}}
	tests := []struct {
		name string
		eng  *fakeEngine
		cfg  Config
		want string
	}{
		{"no certificate", &fakeEngine{}, NewConfig(), "webhook: no TLS certificate"},
		{"a certificate file without key", &fakeEngine{}, NewConfig().WithTLSFiles("cert.pem", ""), "webhook: TLS files: need both"},
		{"missing files", &fakeEngine{}, NewConfig().WithTLSFiles("/nonexistent/cert.pem", "/nonexistent/key.pem"), "webhook: load TLS key pair:"},
		{"an engine without the admission decision", &fakeEngine{answer: func(context.Context, []byte) (json.RawMessage, error) {
			return nil, errors.New(`unknown entrypoint "yunikorn/admission/guard"`)
		}}, NewConfig().WithTLSConfig(withCert), "webhook: probe review: unknown entrypoint"},
		// The denial at the deadline must still be written.
		{"a write timeout not longer than the decision deadline", &fakeEngine{},
			NewConfig().WithTLSConfig(withCert).WithDecisionTimeout(3 * time.Second).WithWriteTimeout(3 * time.Second),
			"webhook: write timeout 3s is not longer than the decision deadline 3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			err = New(tt.eng, tt.cfg.WithLogger(discard)).Serve(context.Background(), ln)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Serve = %v, want %s...", err, tt.want)
			}
			if _, err := ln.Accept(); err == nil {
				t.Error("the listener was left open")
			}
		})
	}
	t.Run("a bad address", func(t *testing.T) {
		err := New(&fakeEngine{}, NewConfig().WithAddr("127.0.0.1:bad").WithTLSConfig(withCert)).ListenAndServe(context.Background())
		if err == nil {
			t.Error("ListenAndServe on a bad address did not fail")
		}
	})
}

func writePEM(t *testing.T, dir string, cert tls.Certificate) (string, string) {
	t.Helper()
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	// Written to temporary names and renamed, as the kubelet swaps a
	// Secret volume's files.
	for f, b := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: cert.Certificate[0]}, keyFile: {Type: "PRIVATE KEY", Bytes: key}} {
		if err := os.WriteFile(f+".tmp", pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f+".tmp", f); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

// TestListenAndServeTLSFiles serves a key pair from files, on the
// configured address, and picks up a rotated pair without a restart.
func TestListenAndServeTLSFiles(t *testing.T) {
	old := certCheckInterval
	certCheckInterval = 0
	defer func() { certCheckInterval = old }()

	dir := t.TempDir()
	first, ca1, err := SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	second, ca2, err := SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := writePEM(t, dir, first)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := New(&fakeEngine{}, NewConfig().WithAddr(addr).WithTLSFiles(certFile, keyFile).WithLogger(discard))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenAndServe = %v", err)
		}
	}()

	serial := func(caPEM []byte) (string, error) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		var lastErr error
		for range 500 {
			c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
			if err == nil {
				s := c.ConnectionState().PeerCertificates[0].SerialNumber.String()
				c.Close()
				return s, nil
			}
			lastErr = err
			time.Sleep(10 * time.Millisecond)
		}
		return "", lastErr
	}
	if s, err := serial(ca1); err != nil || s != first.Leaf.SerialNumber.String() {
		t.Fatalf("first certificate: serial %s, %v", s, err)
	}
	// A later modification time, in case the file system's clock is coarse.
	writePEM(t, dir, second)
	later := time.Now().Add(time.Minute)
	os.Chtimes(certFile, later, later)
	os.Chtimes(keyFile, later, later)
	if s, err := serial(ca2); err != nil || s != second.Leaf.SerialNumber.String() {
		t.Fatalf("rotated certificate: serial %s, %v", s, err)
	}
}

func TestSelfSigned(t *testing.T) {
	cert, caPEM, err := SelfSigned([]string{"webhook.yunikorn.svc", "127.0.0.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		t.Fatal("no Leaf")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA PEM does not parse")
	}
	for _, host := range []string{"webhook.yunikorn.svc", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.example", Roots: pool}); err == nil {
		t.Error("verified for a host not in the SANs")
	}
	if leaf.PublicKeyAlgorithm != x509.ECDSA || leaf.IsCA {
		t.Errorf("leaf: algorithm %v, CA %v; want ECDSA, not a CA", leaf.PublicKeyAlgorithm, leaf.IsCA)
	}
	if d := time.Until(leaf.NotAfter); d < 364*24*time.Hour || d > 366*24*time.Hour {
		t.Errorf("valid for %v more, want a year", d)
	}
	if len(leaf.IPAddresses) != 2 || len(leaf.DNSNames) != 1 {
		t.Errorf("SANs: IPs %v, DNS %v", leaf.IPAddresses, leaf.DNSNames)
	}
	if _, _, err := SelfSigned(nil); err == nil {
		t.Error("SelfSigned(nil) did not fail")
	}
}
