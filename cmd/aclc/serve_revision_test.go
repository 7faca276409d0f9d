package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/tests/bundletest"
)

// queuesAdmin is a queue configuration where only admins may administer
// root.test.
func queuesAdmin(admins string) string {
	return strings.Replace(serveQueues, "adminacl: sue dev,test", "adminacl: "+admins, 1)
}

// buildSignedAt builds a signed bundle from src as 'aclc build' would at t.
func buildSignedAt(t *testing.T, priv string, at time.Time, src string, extra ...string) string {
	t.Helper()
	old := buildClock
	buildClock = func() time.Time { return at }
	defer func() { buildClock = old }()
	out := filepath.Join(t.TempDir(), "signed.tar.gz")
	args := append([]string{"build", "--signing-key", priv, "--output-file", out}, extra...)
	if code, stdout, stderr := runCLI(t, "", append(args, writeFile(t, "queues.yaml", src))...); code != exitOK {
		t.Fatalf("build: %s", stderr)
	} else if !strings.Contains(stdout, "revision ") {
		t.Errorf("build summary names no revision: %s", stdout)
	}
	return out
}

func readyz(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

// TestServeRefusesAnOlderSignedBundle: a signed bundle carries its build
// time as its revision, under the signature; 'aclc serve
// --verification-key' keeps the bundle in service when the file is
// replaced by an older one signed with the same key (it would grant again
// what the newer one took away), says why in its log and /readyz, and
// takes a newer one. Stock OPA checks the signature only (docs/OPERATIONS.md).
func TestServeRefusesAnOlderSignedBundle(t *testing.T) {
	priv, pub := bundletest.WriteKeyPair(t, "ES256")
	t0 := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	older := buildSignedAt(t, priv, t0, queuesAdmin("sue"))                 // sue administers
	newer := buildSignedAt(t, priv, t0.Add(time.Hour), queuesAdmin("john")) // sue removed
	newest := buildSignedAt(t, priv, t0.Add(2*time.Hour), queuesAdmin("bob"))
	read := func(p string) string {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	served := filepath.Join(t.TempDir(), "b.tar.gz")
	rewrite(t, served, read(newer))
	url, logs := startServe(t, "--verification-key", pub, "--bundle", served)
	admin := func(user string) any {
		return decide(t, url, "yunikorn/queues/decision", `{"queue":"root.test","action":"admin","user":"`+user+`"}`)["allow"]
	}
	if admin("sue") != false || admin("john") != true {
		t.Fatalf("newer bundle: sue %v, john %v; want false, true", admin("sue"), admin("john"))
	}

	rewrite(t, served, read(older))
	want := "revision 2001-02-03T04:05:06.000000007Z is older than 2001-02-03T05:05:06.000000007Z, the one in service"
	eventually(t, "older bundle refused in the log", func() string {
		if strings.Contains(logs.String(), want) {
			return ""
		}
		return logs.String()
	})
	if got := readyz(t, url); !strings.Contains(got, "serving the last good bundle") || !strings.Contains(got, want) {
		t.Errorf("/readyz: %q; want the refusal", got)
	}
	if admin("sue") != false || admin("john") != true {
		t.Errorf("after the older bundle: sue %v, john %v; want the newer bundle's false, true", admin("sue"), admin("john"))
	}

	rewrite(t, served, read(newest))
	eventually(t, "newest bundle served", func() string {
		if admin("bob") == true && admin("john") == false {
			return ""
		}
		return "bob not admin yet"
	})
	if got := readyz(t, url); got != "ok\n" {
		t.Errorf("/readyz after the newest bundle: %q", got)
	}
}

// TestSignedRevisionIsSigned: the revision is in the manifest, which the
// signature covers, so an old bundle cannot be dressed up as a new one;
// --revision sets it, and must be orderable when the bundle is signed.
func TestSignedRevisionIsSigned(t *testing.T) {
	priv, pub := bundletest.WriteKeyPair(t, "ES256")
	older := buildSignedAt(t, priv, time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC), queuesAdmin("sue"))
	forged := TamperBundle(t, older, "/.manifest", "2001-02-03T", "2099-02-03T")
	code, stdout, stderr := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--verification-key", pub, "--bundle", forged)
	if code != exitError || !strings.Contains(stderr, ".manifest: digest mismatch") || strings.Contains(stdout, "listening") {
		t.Errorf("revision changed after signing: exit %d, %s", code, stderr)
	}

	numbered := buildSignedAt(t, priv, time.Time{}, queuesAdmin("sue"), "--revision", "42")
	if raw, err := os.ReadFile(numbered); err != nil {
		t.Fatal(err)
	} else if b, err := bundle.NewCustomReader(bundle.NewTarballLoader(bytes.NewReader(raw))).WithSkipBundleVerification(true).Read(); err != nil || b.Manifest.Revision != "42" {
		t.Errorf("--revision 42: manifest revision %q (%v)", b.Manifest.Revision, err)
	}
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	src := writeFile(t, "queues.yaml", serveQueues)
	code, _, stderr = runCLI(t, "", "build", "--signing-key", priv, "--revision", "abc123", "--output-file", out, src)
	if code != exitUsage || !strings.Contains(stderr, `revision "abc123" cannot be ordered`) {
		t.Errorf("signed, --revision abc123: exit %d, %s", code, stderr)
	}
	// Unsigned, the revision is the user's string, as with opa build.
	if code, _, stderr = runCLI(t, "", "build", "--revision", "abc123", "--output-file", out, src); code != exitOK {
		t.Errorf("unsigned, --revision abc123: exit %d, %s", code, stderr)
	}
}
