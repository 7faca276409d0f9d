package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
)

const queues = `partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: test
            adminacl: sue dev
`

func TestNewRefusesWhatCannotBeServed(t *testing.T) {
	src := filepath.Join(t.TempDir(), "q.yaml")
	if err := os.WriteFile(src, []byte(queues), 0o644); err != nil {
		t.Fatal(err)
	}
	vc, err := translate.Verification{KeyFile: src}.VerificationConfig() // any file is an HMAC secret
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"nothing to serve":           NewConfig(),
		"sources and a bundle":       NewConfig().WithSources(src).WithBundle("b.tar.gz"),
		"verification of sources":    NewConfig().WithSources(src).WithVerification(vc),
		"static groups for a bundle": NewConfig().WithBundle("b.tar.gz").WithStaticGroups(true),
		"an unknown log level":       NewConfig().WithSources(src).WithLogLevel("loud"),
	} {
		if _, err := New(context.Background(), cfg.WithLogOutput(io.Discard)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

// TestReloadFailsNoRequest: while the source is rewritten, alternating
// between two decisions, concurrent requests all get one of the two; each
// rewrite is served.
func TestReloadFailsNoRequest(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "q.yaml")
	other := bytes.Replace([]byte(queues), []byte("sue dev"), []byte("sue ops"), 1)
	if err := os.WriteFile(src, []byte(queues), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, NewConfig().WithAddr("127.0.0.1:0").WithSources(src).WithLogOutput(io.Discard).WithLogLevel("error").WithReloadInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func(a string) { ready <- a }) }()
	url := "http://" + <-ready + "/v1/data/yunikorn/queues/decision"
	in := []byte(`{"input":{"queue":"root.test","action":"admin","user":"ann","groups":["dev"]}}`)

	var failed, allowed, denied atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Post(url, "application/json", bytes.NewReader(in))
				if err != nil {
					failed.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode != http.StatusOK:
					failed.Add(1)
				case bytes.Contains(body, []byte(`"allow":true`)):
					allowed.Add(1)
				case bytes.Contains(body, []byte(`"allow":false`)):
					denied.Add(1)
				default:
					failed.Add(1)
				}
			}
		}()
	}
	const rewrites = 10
	for i := 0; i < rewrites; i++ {
		content := other
		if i%2 == 1 {
			content = []byte(queues)
		}
		if err := translate.WriteFileAtomic(src, content); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); srv.Reloads() < int64(i+1); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("rewrite %d not served", i+1)
			}
		}
	}
	close(stop)
	wg.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if failed.Load() != 0 || srv.FailedReloads() != 0 {
		t.Errorf("%d requests and %d reloads failed", failed.Load(), srv.FailedReloads())
	}
	if allowed.Load() == 0 || denied.Load() == 0 {
		t.Errorf("allowed %d, denied %d: both versions should have answered", allowed.Load(), denied.Load())
	}
}

// TestReloadMountedConfigMap serves a ConfigMap mounted as a directory and
// updates it the way the kubelet does: the new keys go to a new
// timestamped directory, and ..data is switched to it by a rename.
func TestReloadMountedConfigMap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "yunikorn-configs")
	version := func(n int, content string) {
		t.Helper()
		ts := filepath.Join(dir, "..2026_11_22_00_00_0"+string(rune('0'+n)))
		if err := os.MkdirAll(ts, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ts, "queues.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version(1, queues)
	if err := os.Symlink(filepath.Join("..data", "queues.yaml"), filepath.Join(dir, "queues.yaml")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, NewConfig().WithAddr("127.0.0.1:0").WithSources(dir).WithLogOutput(io.Discard).WithLogLevel("error").WithReloadInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func(a string) { ready <- a }) }()
	url := "http://" + <-ready + "/v1/data/yunikorn/queues/decision"
	decide := func() string {
		t.Helper()
		resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(`{"input":{"queue":"root.test","action":"admin","user":"ann","groups":["dev"]}}`)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if got := decide(); !bytes.Contains([]byte(got), []byte(`"allow":true`)) {
		t.Fatalf("first version: %s", got)
	}
	version(2, string(bytes.Replace([]byte(queues), []byte("sue dev"), []byte("sue ops"), 1)))
	for deadline := time.Now().Add(10 * time.Second); srv.Reloads() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the new ..data was not served")
		}
	}
	if got := decide(); !bytes.Contains([]byte(got), []byte(`"allow":false`)) {
		t.Errorf("second version: %s", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTwoServersKeepTheirOwnResolver serves one queue configuration twice
// in one process, with resolvers that put john in different groups: each
// server answers from its own (OPA's registry of builtins is process-wide;
// the caches are not).
func TestTwoServersKeepTheirOwnResolver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	src := filepath.Join(dir, "q.yaml")
	if err := os.WriteFile(src, []byte(queues), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(group string) string {
		f := filepath.Join(dir, group+".yaml")
		if err := os.WriteFile(f, []byte("john: ["+group+"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		srv, err := New(ctx, NewConfig().WithAddr("127.0.0.1:0").WithSources(src).WithResolver("file="+f).
			WithLogOutput(io.Discard).WithLogLevel("error").WithReloadInterval(0))
		if err != nil {
			t.Fatal(err)
		}
		ready := make(chan string, 1)
		go func() { _ = srv.Serve(ctx, func(a string) { ready <- a }) }()
		return "http://" + <-ready + "/v1/data/yunikorn/queues/decision"
	}
	dev, ops := start("dev"), start("ops")
	in := []byte(`{"input":{"queue":"root.test","action":"admin","user":"john"}}`)
	for range 3 {
		for url, want := range map[string]string{dev: `"allow":true`, ops: `"allow":false`} {
			resp, err := http.Post(url, "application/json", bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("%s: %s, want %s", url, body, want)
			}
		}
	}
}

// lockedBuffer is a log output read while the server writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReloadServesAChangedGroupsFile replaces the groups file of a
// --resolver file= server: the bundle, which resolves through the builtin,
// is the same, and the new groups must be in service after a reload all
// the same. Then the groups file becomes a symlink to a shadow-style file:
// the reload fails, and neither /readyz nor the log quotes the file.
func TestReloadServesAChangedGroupsFile(t *testing.T) {
	dir := t.TempDir()
	src, groups := filepath.Join(dir, "q.yaml"), filepath.Join(dir, "groups.yaml")
	replace := func(path, content string) {
		t.Helper()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(src, queues)
	replace(groups, "john: [dev]\nann: [ops]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs lockedBuffer
	srv, err := New(ctx, NewConfig().WithAddr("127.0.0.1:0").WithSources(src).WithResolver("file="+groups).
		WithLogOutput(&logs).WithLogLevel("debug").WithReloadInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func(a string) { ready <- a }) }()
	base := "http://" + <-ready
	decide := func(user string) string {
		t.Helper()
		resp, err := http.Post(base+"/v1/data/yunikorn/queues/decision", "application/json",
			bytes.NewReader([]byte(`{"input":{"queue":"root.test","action":"admin","user":"`+user+`"}}`)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	allowed := func(user string) bool { return bytes.Contains([]byte(decide(user)), []byte(`"allow":true`)) }
	if !allowed("john") || allowed("ann") {
		t.Fatalf("first groups file: john %s, ann %s", decide("john"), decide("ann"))
	}
	rev := srv.Revision()
	replace(groups, "john: [ops]\nann: [dev]\n") // john leaves dev, ann joins
	for deadline := time.Now().Add(20 * time.Second); srv.Reloads() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the changed groups file was not reloaded")
		}
	}
	if allowed("john") || !allowed("ann") {
		t.Errorf("second groups file: john %s, ann %s", decide("john"), decide("ann"))
	}
	if srv.Revision() != rev {
		t.Errorf("the bundle changed: %s, was %s", srv.Revision(), rev)
	}

	shadow := filepath.Join(dir, "shadow")
	const hash = "$6$saltsalt$2vNP0g5ZQ4kq1Rt8mHkDmoJz3Y"
	if err := os.WriteFile(shadow, []byte("root:"+hash+":19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := groups + ".link"
	if err := os.Symlink(shadow, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link, groups); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); srv.FailedReloads() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shadow-style groups file did not fail a reload")
		}
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for what, text := range map[string]string{"/readyz": string(body), "the log": logs.String()} {
		for _, secret := range []string{"$6$", "saltsalt", "root:"} {
			if bytes.Contains([]byte(text), []byte(secret)) {
				t.Errorf("%s quotes the groups file (%q):\n%s", what, secret, text)
			}
		}
	}
	if !bytes.Contains([]byte(logs.String()), []byte("groups.yaml:1:")) {
		t.Errorf("the log does not locate the error in the groups file:\n%s", logs.String())
	}
	if allowed("john") || !allowed("ann") {
		t.Errorf("after the failed reload: john %s, ann %s", decide("john"), decide("ann"))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
