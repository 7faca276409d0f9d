package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/tests/silentldap"
	"github.com/aclc-dev/aclc/tests/slapd"
)

func TestMain(m *testing.M) {
	code := m.Run()
	slapd.StopShared()
	os.Exit(code)
}

const ldapQueues = `partitions:
  - name: default
    usergroupresolver: {type: ldap}
    queues:
      - name: root
        submitacl: " "
        queues:
          - name: devs
            submitacl: " Devs"
`

// secretPW is a password no output may show.
const secretPW = "Zq7-never-print-me"

func ldapSecret(t *testing.T, change map[string]string) string {
	t.Helper()
	kv := map[string]string{
		"Host": "127.0.0.1", "Port": "3389", "BaseDN": "dc=example,dc=org",
		"Filter": "(&(objectClass=inetOrgPerson)(sAMAccountName=%s))", "GroupAttr": "memberOf", "ReturnAttr": "memberOf",
		"BindUser": "cn=reader,ou=system,dc=example,dc=org", "BindPassword": secretPW,
	}
	for k, v := range change {
		kv[k] = v
	}
	dir := t.TempDir()
	if err := slapd.WriteSecret(dir, kv); err != nil {
		t.Fatal(err)
	}
	return dir
}

func noPassword(t *testing.T, outs ...string) {
	t.Helper()
	for _, o := range outs {
		if strings.Contains(o, secretPW) {
			t.Errorf("the bind password was printed: %s", o)
		}
	}
}

func TestCheckLDAP(t *testing.T) {
	conf := writeFile(t, "queues.yaml", ldapQueues)
	t.Run("a good secret: YuniKorn's quirks are warnings", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "check", "--resolver", "ldap="+ldapSecret(t, map[string]string{"GroupAttr": "groupMembership"}), conf)
		if code != exitOK {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
		for _, want := range []string{"warning: " + builtins.QuirkLDAPFilterUnescaped, "warning: " + builtins.QuirkLDAPCNParsing, "warning: " + builtins.QuirkLDAPGroupAttrUnused} {
			if !strings.Contains(stdout, want) {
				t.Errorf("no %q in\n%s", want, stdout)
			}
		}
		noPassword(t, stdout, stderr)
	})
	t.Run("a key YuniKorn rejects fails the check with its message", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "check", "--resolver", "ldap="+ldapSecret(t, map[string]string{"Port": "ldap", "SSL": "maybe"}), conf)
		if code != exitError || !strings.Contains(stdout, `Port: invalid port number: strconv.Atoi: invalid syntax`) ||
			!strings.Contains(stdout, "unable to properly load LDAP configuration") ||
			!strings.Contains(stdout, `warning: ldap-config: SSL: invalid boolean value`) {
			t.Errorf("exit %d: %s %s", code, stdout, stderr)
		}
		noPassword(t, stdout, stderr)
	})
	t.Run("type ldap without a secret where check runs is a warning, as YuniKorn's validator accepts it", func(t *testing.T) {
		if _, err := os.Stat(builtins.LDAPSecretsDir); err == nil {
			t.Skip(builtins.LDAPSecretsDir + " exists here")
		}
		code, stdout, _ := runCLI(t, "", "check", conf)
		if code != exitOK || !strings.Contains(stdout, "warning: ldap-unchecked: partition default: usergroupresolver type ldap: there is no LDAP secret at /run/secrets/ldap here") ||
			!strings.Contains(stdout, "pass --resolver ldap=DIR") || strings.Contains(stdout, "error") {
			t.Errorf("exit %d: %s", code, stdout)
		}
		code, stdout, _ = runCLI(t, "", "check", "--resolver", "ldap="+filepath.Join(t.TempDir(), "absent"), conf)
		if code != exitError || !strings.Contains(stdout, "unable to access LDAP secrets directory under") {
			t.Errorf("a directory named with --resolver must be there: exit %d: %s", code, stdout)
		}
		code, _, stderr := runCLI(t, `{"queue":"root.devs","action":"submit","user":"alice"}`, "eval", "--engine", "native", "--entrypoint", "yunikorn/queues/decision", conf)
		if code != exitError || !strings.Contains(stderr, "pass --resolver ldap=DIR") {
			t.Errorf("eval: exit %d: %s", code, stderr)
		}
	})
}

// TestEvalLDAP asks the CLI, on every in-process engine, for decisions
// whose groups come from a real slapd.
func TestEvalLDAP(t *testing.T) {
	srv := slapd.Shared(t)
	conf := writeFile(t, "queues.yaml", ldapQueues)
	good := srv.SecretDir(t, nil)
	bad := ldapSecret(t, map[string]string{"Port": strconv.Itoa(srv.LDAPPort)}) // the server, the wrong password
	for _, eng := range []string{"native", "rego", "wasm", "opa-wasm"} {
		for _, tc := range []struct {
			dir, user, want string
		}{
			{good, "alice", `"allow":true`},
			{good, "dave", `"allow":false`},
			{good, "bob", `YuniKorn would panic`},
			{bad, "alice", `LDAP Result Code 49`},
		} {
			in := `{"queue":"root.devs","action":"submit","user":"` + tc.user + `"}`
			code, stdout, stderr := runCLI(t, in, "eval", "--jsonl", "--engine", eng, "--resolver", "ldap="+tc.dir, "--entrypoint", "yunikorn/queues/decision", conf)
			if code != exitOK || !strings.Contains(stdout, tc.want) {
				t.Errorf("%s %s: exit %d, %s %s; want %s", eng, tc.user, code, stdout, stderr, tc.want)
			}
			noPassword(t, stdout, stderr)
		}
	}
}

// silentCeiling is a generous bound on answers and exits that the
// timeouts under test put at a second or a few: a busy machine may add
// many more, and what the tests catch is waiting on the directory for good.
const silentCeiling = 15 * time.Second

// TestEvalLDAPSilentDirectory: on every in-process engine, a directory that
// accepts the connection and never answers is a failed lookup within the
// timeout, denied with its error as YuniKorn denies a failed lookup.
func TestEvalLDAPSilentDirectory(t *testing.T) {
	silent := silentldap.Start(t)
	conf := writeFile(t, "queues.yaml", ldapQueues)
	resolver := "ldap=" + silent.SecretDir(t, nil) + ",timeout=2s"
	want := fmt.Sprintf(`"reason":"LDAP Result Code 200 \"Network Error\": ldap: no answer from ldap://127.0.0.1:%d within 2s"`, silent.Port)
	for _, eng := range []string{"native", "rego", "wasm", "opa-wasm"} {
		start := time.Now()
		code, stdout, stderr := runCLI(t, `{"queue":"root.devs","action":"submit","user":"alice"}`, "eval", "--jsonl", "--engine", eng,
			"--resolver", resolver, "--entrypoint", "yunikorn/queues/decision", conf)
		if code != exitOK || !strings.Contains(stdout, `"allow":false`) || !strings.Contains(stdout, want) {
			t.Errorf("%s: exit %d, %s %s; want a denial with %s", eng, code, stdout, stderr, want)
		}
		if took := time.Since(start); took > silentCeiling {
			t.Errorf("%s: answered after %s with a 2s timeout", eng, took)
		}
	}
}

// TestServeLDAPSilentDirectory runs aclc serve against a directory that
// accepts connections and never answers, which YuniKorn waits on for good.
func TestServeLDAPSilentDirectory(t *testing.T) {
	silent := silentldap.Start(t)
	conf := writeFile(t, "queues.yaml", ldapQueues)
	dir := silent.SecretDir(t, nil)
	t.Run("a queue decision is denied with the lookup error within seconds", func(t *testing.T) {
		url, _ := startServe(t, "--resolver", "ldap="+dir+",timeout=2s", conf)
		start := time.Now()
		got := decide(t, url, "yunikorn/queues/decision", `{"queue":"root.devs","action":"submit","user":"alice"}`)
		want := fmt.Sprintf(`LDAP Result Code 200 "Network Error": ldap: no answer from ldap://127.0.0.1:%d within 2s`, silent.Port)
		if got["allow"] != false || got["reason"] != want {
			t.Fatalf("decision %v, want a denial with %q", got, want)
		}
		if took := time.Since(start); took > silentCeiling {
			t.Fatalf("answered after %s with a 2s timeout", took)
		}
		// YuniKorn keeps the failure: the next request is denied at once,
		// without the directory.
		dials := silent.Accepted()
		got = decide(t, url, "yunikorn/queues/decision", `{"queue":"root.devs","action":"submit","user":"alice"}`)
		if reason, _ := got["reason"].(string); got["allow"] != false || !strings.HasPrefix(reason, "user resolution failed, cached data returned: ") || silent.Accepted() != dials {
			t.Fatalf("second decision %v, want YuniKorn's cached failure", got)
		}
	})
	t.Run("SIGTERM stops it within the grace period while a lookup waits", func(t *testing.T) {
		// Lookups that would wait five minutes, and no decision deadline:
		// only the shutdown can end the request.
		code, took := stopServeDuringLookup(t, silent, "--resolver", "ldap="+dir+",dial-timeout=5m,timeout=5m", "--decision-timeout", "0", conf)
		if code != exitOK {
			t.Errorf("exit %d after SIGTERM, want a clean stop", code)
		}
		if took > silentCeiling {
			t.Errorf("stopped %s after SIGTERM; the grace period is 5s", took)
		}
	})
}

// stopServeDuringLookup starts aclc serve, sends it a decision whose group
// lookup reaches silent and waits there, then cancels it as SIGTERM does,
// and returns its exit code and how long it took to stop.
func stopServeDuringLookup(t *testing.T, silent *silentldap.Server, args ...string) (int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := serveContext
	serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { serveContext = old }()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(append([]string{"serve", "--addr", "127.0.0.1:0", "--reload-interval", "0"}, args...), stdout, stderr)
	}()
	addrRE := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; time.Sleep(10 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("exited %d before listening: %s %s", code, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 60s: %s", stderr.String())
		}
	}
	dials := silent.Accepted()
	answered := make(chan error, 1)
	go func() {
		c := &http.Client{Timeout: time.Minute}
		resp, err := c.Post(url+"/v1/data/yunikorn/queues/decision", "application/json",
			strings.NewReader(`{"input":{"queue":"root.devs","action":"submit","user":"alice"}}`))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		answered <- err
	}()
	for deadline := time.Now().Add(silentCeiling); silent.Accepted() == dials; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the decision never reached the directory")
		}
	}
	time.Sleep(200 * time.Millisecond) // into the bind, which is never answered
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		took := time.Since(start)
		select {
		case <-answered: // answered or cut off: either way not left waiting
		case <-time.After(silentCeiling):
			t.Error("the request in flight was left waiting after the server stopped")
		}
		return code, took
	case <-time.After(2 * time.Minute):
		t.Fatalf("still running 2 min after SIGTERM: %s", stderr.String())
	}
	return 0, 0
}
