package builtins

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/tests/slapd"
)

func TestMain(m *testing.M) {
	code := m.Run()
	slapd.StopShared()
	os.Exit(code)
}

func ldapResolver(t testing.TB, srv *slapd.Server, change map[string]string) *LDAPResolver {
	t.Helper()
	r, err := LoadLDAPResolver(srv.SecretDir(t, change))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLDAPAgainstSlapd checks every row of the placement specification's
// LDAP behaviour (§6.3, §6.4, §6.5) against a real slapd.
func TestLDAPAgainstSlapd(t *testing.T) {
	srv := slapd.Shared(t)
	for _, tc := range []struct {
		name      string
		change    map[string]string
		user      string
		want      []string
		wantErr   string // prefix of the error; "" for none
		wantPanic bool
	}{
		{name: "memberOf CNs follow the user name, the user's own CN skipped", user: "alice", want: []string{"alice", "Devs", "ops team"}},
		{name: "an escaped comma is cut, keeping the backslash", user: "carol", want: []string{"carol", `a\`}},
		{name: "no memberOf gives the user name alone", user: "dave", want: []string{"dave"}},
		{name: "CN= inside the first piece and an empty CN are taken", user: "erin", want: []string{"erin", "y", ""}},
		{name: "a user the directory does not hold resolves to the user name", user: "zed", want: []string{"zed"}},
		{name: "lower-case cn= makes YuniKorn panic", user: "bob", wantPanic: true},
		{name: "a first piece without CN= makes YuniKorn panic", user: "frank", wantPanic: true},
		{name: "the filter is not escaped: c* matches carol", user: "c*", want: []string{"c*", `a\`}},
		{name: "the filter is not escaped: a* gets alice's groups, her own CN included", user: "a*", want: []string{"a*", "Devs", "ops team", "alice"}},
		{name: "a parenthesis in the user name breaks the filter", user: "x)(", wantErr: `LDAP Result Code 201 "Filter Compile Error"`},
		{name: "a filter with two %s fails at search", change: map[string]string{"Filter": "(|(sAMAccountName=%s)(cn=%s))"}, user: "alice",
			wantErr: `LDAP Result Code 201 "Filter Compile Error"`},
		{name: "an attribute the server does not know matches nothing", change: map[string]string{"Filter": "(&(objectClass=inetOrgPerson)(noSuchAttr=%s))"}, user: "alice", want: []string{"alice"}},
		{name: "YuniKorn's default filter works with the ad-lite schema", change: map[string]string{"Filter": "(&(sAMAccountName=%s))"}, user: "alice", want: []string{"alice", "Devs", "ops team"}},
		{name: "requesting memberof still reads memberOf", change: map[string]string{"ReturnAttr": "memberof"}, user: "alice", want: []string{"alice", "Devs", "ops team"}},
		{name: "not requesting memberOf gives the user name alone", change: map[string]string{"ReturnAttr": "cn"}, user: "alice", want: []string{"alice"}},
		{name: "GroupAttr is never used", change: map[string]string{"GroupAttr": "cn"}, user: "alice", want: []string{"alice", "Devs", "ops team"}},
		{name: "a wrong password is result code 49", change: map[string]string{"BindPassword": "wrong"}, user: "alice",
			want: []string{"alice"}, wantErr: `LDAP Result Code 49 "Invalid Credentials": `},
		{name: "a bind user that is not a DN is result code 34", change: map[string]string{"BindUser": "admin"}, user: "alice",
			want: []string{"alice"}, wantErr: `LDAP Result Code 34 "Invalid DN Syntax": invalid DN`},
		{name: "ldaps without verification", change: map[string]string{"Port": strconv.Itoa(srv.LDAPSPort), "SSL": "true", "Insecure": "true"}, user: "alice",
			want: []string{"alice", "Devs", "ops team"}},
		{name: "ldaps with verification and an unknown authority fails", change: map[string]string{"Port": strconv.Itoa(srv.LDAPSPort), "SSL": "true"}, user: "alice",
			want: []string{"alice"}, wantErr: `LDAP Result Code 200 "Network Error": tls: failed to verify certificate: x509: certificate signed by unknown authority`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ldapResolver(t, srv, tc.change)
			got, err := r.Resolve(tc.user)
			var p *PanicError
			if tc.wantPanic {
				if !errors.As(err, &p) || p.Cause != "runtime error: index out of range [1] with length 1" {
					t.Fatalf("Resolve(%q) = %q, %v; want YuniKorn's panic", tc.user, got, err)
				}
				return
			}
			if errors.As(err, &p) {
				t.Fatalf("unexpected panic error: %v", err)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Resolve(%q): %v", tc.user, err)
			}
			if tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)) {
				t.Fatalf("Resolve(%q) error %v, want prefix %q", tc.user, err, tc.wantErr)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Resolve(%q) = %q, want %q", tc.user, got, tc.want)
			}
		})
	}
	t.Run("a closed port is a network error", func(t *testing.T) {
		port := closedTCPPort(t)
		r := ldapResolver(t, srv, map[string]string{"Port": strconv.Itoa(port)})
		got, err := r.Resolve("alice")
		want := fmt.Sprintf(`LDAP Result Code 200 "Network Error": dial tcp 127.0.0.1:%d: connect: connection refused`, port)
		if err == nil || err.Error() != want || !reflect.DeepEqual(got, []string{"alice"}) {
			t.Fatalf("Resolve = %q, %v; want [alice], %s", got, err, want)
		}
	})
	t.Run("ldaps verified against the certificate in SSL_CERT_FILE", func(t *testing.T) {
		// Go reads SSL_CERT_FILE once per process: run in a child.
		dir := srv.SecretDir(t, map[string]string{"Port": strconv.Itoa(srv.LDAPSPort), "SSL": "true", "Insecure": "false"})
		cmd := exec.Command(os.Args[0], "-test.run=^TestLDAPSVerifiedChild$", "-test.v")
		cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+srv.CertFile, "ACLC_LDAPS_CHILD_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestLDAPSVerifiedChild") {
			t.Fatalf("child: %v\n%s", err, out)
		}
	})
}

// TestLDAPSVerifiedChild is run by TestLDAPAgainstSlapd in a child process
// that trusts slapd's certificate.
func TestLDAPSVerifiedChild(t *testing.T) {
	dir := os.Getenv("ACLC_LDAPS_CHILD_DIR")
	if dir == "" {
		t.Skip("run by TestLDAPAgainstSlapd")
	}
	r, err := LoadLDAPResolver(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Resolve("alice")
	if err != nil || !reflect.DeepEqual(got, []string{"alice", "Devs", "ops team"}) {
		t.Fatalf("Resolve = %q, %v", got, err)
	}
}

// closedTCPPort returns a loopback port nothing listens on: one the
// kernel just handed out and that was closed again.
func closedTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestLDAPCacheAgainstSlapd checks the cache's timing rules (ACL spec
// §7.3, placement spec §6.5) with lookups that go to the directory.
func TestLDAPCacheAgainstSlapd(t *testing.T) {
	srv := slapd.Shared(t)
	t.Run("a change in the directory shows after the positive lifetime", func(t *testing.T) {
		t.Cleanup(func() { _ = srv.SetMemberOf("gina", slapd.Users["gina"]...) })
		clock := newFakeClock()
		c := NewCache(ldapResolver(t, srv, nil), clock)
		first, err := c.GetUserGroup("gina")
		if err != nil || !reflect.DeepEqual(first.Groups, []string{"gina", "Devs", "admins"}) {
			t.Fatalf("first lookup %v, %v", first, err)
		}
		if err := srv.SetMemberOf("gina", "CN=auditors,OU=groups,DC=example,DC=org"); err != nil {
			t.Fatal(err)
		}
		clock.Advance(PositiveTTL - time.Second)
		if ug, _ := c.GetUserGroup("gina"); !reflect.DeepEqual(ug.Groups, first.Groups) {
			t.Fatalf("at 299 s the cached groups should be served, got %q", ug.Groups)
		}
		clock.Advance(time.Second)
		if ug, err := c.GetUserGroup("gina"); err != nil || !reflect.DeepEqual(ug.Groups, []string{"gina", "auditors"}) {
			t.Fatalf("at 300 s the directory should be asked again, got %q, %v", ug.Groups, err)
		}
	})
	t.Run("a failed lookup is served from the cache until the cleaner drops it", func(t *testing.T) {
		clock := newFakeClock()
		c := NewCache(ldapResolver(t, srv, map[string]string{"BindPassword": "wrong"}), clock)
		ug, err := c.GetUserGroup("alice")
		if err == nil || !strings.HasPrefix(err.Error(), `LDAP Result Code 49`) || !ug.Failed || !reflect.DeepEqual(ug.Groups, []string{"alice"}) {
			t.Fatalf("first lookup %+v, %v", ug, err)
		}
		clock.Advance(NegativeTTL)
		c.Clean() // 30 s old: survives
		_, err = c.GetUserGroup("alice")
		want := fmt.Sprintf("user resolution failed, cached data returned: %v", time.Unix(t0, 0))
		if err == nil || err.Error() != want || !errors.Is(err, ErrCachedFailure) {
			t.Fatalf("second lookup error %v, want %q", err, want)
		}
		clock.Advance(time.Second)
		c.Clean() // 31 s old: removed
		if _, err = c.GetUserGroup("alice"); err == nil || !strings.HasPrefix(err.Error(), `LDAP Result Code 49`) {
			t.Fatalf("after the cleaner the directory should be asked again, got %v", err)
		}
		forced, err := c.ConvertUGI("alice", nil, true)
		if err != nil || !reflect.DeepEqual(forced.Groups, []string{AnonymousGroup}) {
			t.Fatalf("forced after a failure: %+v, %v; want nogroup", forced, err)
		}
	})
	t.Run("a lookup YuniKorn panics on is not cached and not forced through", func(t *testing.T) {
		c := NewCache(ldapResolver(t, srv, nil), newFakeClock())
		for range 2 {
			_, err := c.GetUserGroup("bob")
			var p *PanicError
			if !errors.As(err, &p) {
				t.Fatalf("lookup error %v, want a panic error", err)
			}
		}
		if _, err := c.ConvertUGI("bob", nil, true); err == nil {
			t.Fatal("a forced request for a user YuniKorn panics on must not get nogroup")
		}
		out, err := UserGroups(c).Func([]json.RawMessage{[]byte(`"bob"`)})
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Groups       []string
			Error, Panic string
		}
		if err := json.Unmarshal(out, &res); err != nil || res.Panic != "runtime error: index out of range [1] with length 1" || !strings.HasPrefix(res.Error, "YuniKorn would panic") {
			t.Fatalf("builtin result %s", out)
		}
	})
}

// BenchmarkLDAPCachedLookup is a lookup the cache answers.
func BenchmarkLDAPCachedLookup(b *testing.B) {
	srv := slapd.Shared(b)
	c := NewCache(ldapResolver(b, srv, nil), nil)
	if _, err := c.GetUserGroup("alice"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, msg := c.Groups("alice"); msg != "" {
			b.Fatal(msg)
		}
	}
}

// BenchmarkLDAPUncachedLookup is a cache miss: dial, bind, search and close
// against the local slapd.
func BenchmarkLDAPUncachedLookup(b *testing.B) {
	srv := slapd.Shared(b)
	r := ldapResolver(b, srv, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Resolve("alice"); err != nil {
			b.Fatal(err)
		}
	}
}
