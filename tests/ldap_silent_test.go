package tests

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
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
	"github.com/aclc-dev/aclc/tests/silentldap"
	"github.com/aclc-dev/aclc/wasm"
)

// silentCeiling bounds answers and stops that the timeouts under test put
// at a second or a few. It is generous: a busy machine adds seconds, and
// what the tests catch is waiting on the directory for good, as YuniKorn's
// resolver does (a 60 s dial timeout, no request timeout).
const silentCeiling = 15 * time.Second

// TestLDAPSilentDirectoryOnEveryEngine decides queue requests whose
// directory accepts the connection and never answers, on every in-process
// engine and on aclc serve: the lookup fails within its timeout and is
// answered as YuniKorn answers a failed lookup (placement spec §6.5):
// denied with the error, then with the cached failure, and a forced request
// gets nogroup.
func TestLDAPSilentDirectoryOnEveryEngine(t *testing.T) {
	silent := silentldap.Start(t)
	ctx := context.Background()
	spec := "ldap=" + silent.SecretDir(t, nil) + ",timeout=2s"
	set, err := NewEngineSet(ctx, Single("queues.yaml", []byte(ldapQueues)), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(ctx)
	url, stop, served, err := serveInProcessCache(ctx, serve.NewConfig().WithSources(writeTemp(t, "queues.yaml", ldapQueues)).WithResolver(spec).WithReloadInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	h, err := engine.NewHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	noAnswer := fmt.Sprintf(`LDAP Result Code 200 "Network Error": ldap: no answer from ldap://127.0.0.1:%d within 2s`, silent.Port)
	steps := []struct {
		note, input string
		allow       bool
		reason      string // prefix
		dials       bool   // goes to the directory
	}{
		{"the lookup times out: denied with its error", `{"queue":"root.devs","action":"submit","user":"alice"}`, false, noAnswer, true},
		{"the failure is cached: denied at once", `{"queue":"root.devs","action":"submit","user":"alice"}`, false, "user resolution failed, cached data returned: ", false},
		{"forced, the only group is nogroup", `{"queue":"root.anon","action":"submit","user":"alice","forced":true}`, true, "submitacl of root.anon allows group \"nogroup\"", false},
	}
	for _, e := range append(append([]engine.Engine(nil), set.Engines...), namedEngine{h, HTTPServe}) {
		t.Run(e.Name(), func(t *testing.T) {
			ResetGroups(e)
			served.Reset()
			for _, st := range steps {
				dials := silent.Accepted()
				start := time.Now()
				got, err := e.Eval(ctx, translate.EntrypointYuniKornQueues, []byte(st.input))
				took := time.Since(start)
				if err != nil {
					t.Fatalf("%s: %v", st.note, err)
				}
				var d struct {
					Allow  bool
					Reason string
				}
				if err := json.Unmarshal(got, &d); err != nil || d.Allow != st.allow || !strings.Contains(d.Reason, st.reason) {
					t.Errorf("%s: %s, want allow %v and a reason containing %s", st.note, got, st.allow, st.reason)
				}
				if took > silentCeiling {
					t.Errorf("%s: answered after %s with a 2s timeout", st.note, took)
				}
				if dialed := silent.Accepted() > dials; dialed != st.dials {
					t.Errorf("%s: went to the directory: %v, want %v", st.note, dialed, st.dials)
				}
			}
		})
	}
}

// podReview is a pod in root.devs created by alice, whose request carries
// no groups: the queue review resolves them through the directory.
const podReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",` +
	`"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},` +
	`"namespace":"default","operation":"CREATE","userInfo":{"username":"alice"},` +
	`"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",` +
	`"labels":{"yunikorn.apache.org/queue":"root.devs","applicationId":"app-1"}},` +
	`"spec":{"schedulerName":"yunikorn","containers":[{"name":"c","image":"x"}]}}}}`

// silentWebhook serves /validate-queue on aclc's Wasm host with groups from
// the resolver spec, until ctx is done; it returns the server's URL, a
// client that trusts it, and Serve's result.
func silentWebhook(t *testing.T, ctx context.Context, spec string, cfg webhook.Config) (string, *http.Client, <-chan error, engine.Engine) {
	t.Helper()
	s := &translate.Sources{}
	if err := AddTo(s, Single("queues.yaml", []byte(ldapQueues))); err != nil {
		t.Fatal(err)
	}
	s, err := s.WithGroupResolution(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := translate.WasmBundle(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := translate.BundleBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.NewWasm(ctx, raw, wasm.NewConfig(), engine.NewGroupCache(s.Groups()))
	if err != nil {
		t.Fatal(err)
	}
	cert, caPEM, err := webhook.SelfSigned([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := webhook.New(eng, cfg.WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}).WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	url := "https://" + ln.Addr().String()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := client.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("webhook not ready after 60s")
		}
	}
	return url, client, done, eng
}

// reviewQueue posts podReview to /validate-queue and returns the response.
func reviewQueue(client *http.Client, url, uid string) (allowed bool, message string, err error) {
	resp, err := client.Post(url+"/validate-queue", "application/json", bytes.NewReader(fmt.Appendf(nil, podReview, uid)))
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	var ar struct {
		Response struct {
			Allowed bool
			Status  struct{ Message string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&ar); err != nil {
		return false, "", fmt.Errorf("%s: %w", resp.Status, err)
	}
	return ar.Response.Allowed, ar.Response.Status.Message, nil
}

// TestWebhookLDAPSilentDirectory: aclc webhook with its default decision
// deadline and the resolver's default timeouts denies, within seconds,
// the pod whose groups come from a directory that never answers, with
// YuniKorn's rejection carrying the lookup error; and it stops within its
// grace period while a lookup waits, its engine closing rather than waiting
// on the lookup.
func TestWebhookLDAPSilentDirectory(t *testing.T) {
	silent := silentldap.Start(t)
	dir := silent.SecretDir(t, nil)
	t.Run("the pod is denied with the lookup error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		url, client, done, eng := silentWebhook(t, ctx, "ldap="+dir, webhook.NewConfig())
		defer func() { cancel(); <-done; eng.Close(context.Background()) }()
		start := time.Now()
		allowed, msg, err := reviewQueue(client, url, "s-1")
		want := fmt.Sprintf(`yunikorn: application app-1 would be rejected: LDAP Result Code 200 "Network Error": ldap: no answer from ldap://127.0.0.1:%d within 1s`, silent.Port)
		if err != nil || allowed || !strings.HasPrefix(msg, want) {
			t.Fatalf("review: allowed %v, %q, %v; want a denial starting %q", allowed, msg, err, want)
		}
		if took := time.Since(start); took > silentCeiling {
			t.Fatalf("answered after %s", took)
		}
		dials := silent.Accepted()
		allowed, msg, err = reviewQueue(client, url, "s-2")
		if err != nil || allowed || !strings.Contains(msg, "would be rejected: user resolution failed, cached data returned: ") || silent.Accepted() != dials {
			t.Fatalf("second review: allowed %v, %q, %v; want YuniKorn's cached failure", allowed, msg, err)
		}
	})
	t.Run("cancelled, it stops within its grace period while a lookup waits", func(t *testing.T) {
		// Lookups that would wait five minutes under a one-minute decision
		// deadline: only the shutdown can end the review.
		const grace = 2 * time.Second
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg := webhook.NewConfig().WithDecisionTimeout(time.Minute).WithWriteTimeout(2 * time.Minute).WithShutdownGrace(grace)
		url, client, done, eng := silentWebhook(t, ctx, "ldap="+dir+",dial-timeout=5m,timeout=5m", cfg)
		dials := silent.Accepted()
		type answer struct {
			allowed bool
			msg     string
			err     error
		}
		answered := make(chan answer, 1)
		go func() { a, m, err := reviewQueue(client, url, "s-3"); answered <- answer{a, m, err} }()
		for deadline := time.Now().Add(silentCeiling); silent.Accepted() == dials; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the review never reached the directory")
			}
		}
		time.Sleep(200 * time.Millisecond) // into the bind, which is never answered
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			// The review outlived the grace period: its connection was
			// closed, which cancelled it, and Serve says so.
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Serve: %v, want the grace period's end", err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("Serve still running 2 min after cancellation")
		}
		if took := time.Since(start); took > silentCeiling {
			t.Errorf("Serve returned %s after cancellation; the grace period is %s", took, grace)
		}
		closed := make(chan error, 1)
		go func() { closed <- eng.Close(context.Background()) }()
		select {
		case <-closed:
		case <-time.After(silentCeiling):
			t.Error("the engine did not close: the lookup is still running")
		}
		select {
		case a := <-answered:
			// Cut off (the API server's failurePolicy decides), never admitted.
			if a.err == nil && a.allowed {
				t.Errorf("the review in flight was admitted: %q", a.msg)
			}
		case <-time.After(silentCeiling):
			t.Error("the review in flight was left waiting after the server stopped")
		}
	})
}
