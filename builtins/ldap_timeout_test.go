package builtins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/tests/silentldap"
)

// The ceilings below are generous on purpose: the bound under test is a
// second or two, and a busy machine may add many more before the test
// looks at the clock. What they catch is a lookup that waits on the
// directory for good, as YuniKorn's does.
const answerCeiling = 15 * time.Second

func silentResolver(t *testing.T, srv *silentldap.Server, change map[string]string, tm LDAPTimeouts) *LDAPResolver {
	t.Helper()
	r, err := LoadLDAPResolver(srv.SecretDir(t, change))
	if err != nil {
		t.Fatal(err)
	}
	return r.WithTimeouts(tm)
}

func TestParseLDAPSpec(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    LDAPSpec
		notLDAP bool
		wantErr string
	}{
		{spec: "ldap", want: LDAPSpec{Dir: LDAPSecretsDir}},
		{spec: "ldap=/s", want: LDAPSpec{Dir: "/s"}},
		{spec: "ldap=/s,timeout=2s", want: LDAPSpec{Dir: "/s", Timeouts: LDAPTimeouts{Request: 2 * time.Second}}},
		{spec: "ldap=/s,dial-timeout=500ms,timeout=1m", want: LDAPSpec{Dir: "/s", Timeouts: LDAPTimeouts{Dial: 500 * time.Millisecond, Request: time.Minute}}},
		{spec: "ldap,timeout=2s", want: LDAPSpec{Dir: LDAPSecretsDir, Timeouts: LDAPTimeouts{Request: 2 * time.Second}}},
		{spec: "ldap=/a,b", want: LDAPSpec{Dir: "/a,b"}},
		{spec: "ldap=/a,b,timeout=3s", want: LDAPSpec{Dir: "/a,b", Timeouts: LDAPTimeouts{Request: 3 * time.Second}}},
		{spec: "ldapx", notLDAP: true},
		{spec: "file=ldap", notLDAP: true},
		{spec: "ldap=", wantErr: "ldap= needs the directory"},
		{spec: "ldap=,timeout=2s", wantErr: "ldap= needs the directory"},
		{spec: "ldap=/s,timeout=0s", wantErr: "timeout=0s: want a positive duration"},
		{spec: "ldap=/s,timeout=5", wantErr: "timeout=5: want a positive duration"},
		{spec: "ldap=/s,timeout=1s,timeout=2s", wantErr: "timeout given twice"},
		{spec: "ldap,retries=2", wantErr: `unknown ldap option "retries=2"`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			got, ok, err := ParseLDAPSpec(tc.spec)
			if ok == tc.notLDAP {
				t.Fatalf("ok = %v", ok)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrUnknownResolver) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if _, err := NewResolver(tc.spec); err == nil {
					t.Fatal("NewResolver accepted it")
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("= %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestNewResolverLDAPTimeouts(t *testing.T) {
	srv := silentldap.Start(t)
	dir := srv.SecretDir(t, nil)
	for spec, want := range map[string]LDAPTimeouts{
		"ldap=" + dir:                                  DefaultLDAPTimeouts(),
		"ldap=" + dir + ",timeout=2s":                  {Dial: DefaultLDAPDialTimeout, Request: 2 * time.Second},
		"ldap=" + dir + ",dial-timeout=1s,timeout=20s": {Dial: time.Second, Request: 20 * time.Second},
	} {
		r, err := NewResolver(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.(*LDAPResolver).Timeouts(); got != want || r.(*LDAPResolver).Dir() != dir {
			t.Errorf("%s: timeouts %+v, want %+v", spec, got, want)
		}
	}
}

// TestLDAPSilentDirectory points the resolver at a directory that accepts
// the connection and never answers (YuniKorn waits on it for good).
func TestLDAPSilentDirectory(t *testing.T) {
	srv := silentldap.Start(t)
	t.Run("the lookup fails within the request timeout", func(t *testing.T) {
		r := silentResolver(t, srv, nil, LDAPTimeouts{Request: time.Second})
		start := time.Now()
		got, err := r.Resolve("alice")
		took := time.Since(start)
		want := fmt.Sprintf(`LDAP Result Code 200 "Network Error": ldap: no answer from ldap://127.0.0.1:%d within 1s`, srv.Port)
		if err == nil || err.Error() != want || !reflect.DeepEqual(got, []string{"alice"}) {
			t.Fatalf("Resolve = %q, %v; want [alice], %s", got, err, want)
		}
		if took < time.Second || took > answerCeiling {
			t.Fatalf("took %s, want about the 1s timeout", took)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a timeout is the directory's failure, not the caller's: %v", err)
		}
	})
	t.Run("an ldaps handshake that never comes fails within the dial timeout", func(t *testing.T) {
		r := silentResolver(t, srv, map[string]string{"SSL": "true"}, LDAPTimeouts{Dial: time.Second, Request: time.Minute})
		start := time.Now()
		_, err := r.Resolve("alice")
		want := fmt.Sprintf(`LDAP Result Code 200 "Network Error": ldap: no connection to ldaps://127.0.0.1:%d within 1s: `, srv.Port)
		if err == nil || !strings.HasPrefix(err.Error(), want) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Resolve error %v, want prefix %s", err, want)
		}
		if took := time.Since(start); took > answerCeiling {
			t.Fatalf("took %s with a 1s dial timeout", took)
		}
	})
	t.Run("a caller that gives up stops the lookup", func(t *testing.T) {
		r := silentResolver(t, srv, nil, LDAPTimeouts{Dial: time.Minute, Request: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		got, err := r.ResolveContext(ctx, "alice")
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), `LDAP Result Code 200 "Network Error": ldap: lookup abandoned: context canceled`) {
			t.Fatalf("ResolveContext = %q, %v; want the caller's cancellation", got, err)
		}
		if took := time.Since(start); took > answerCeiling {
			t.Fatalf("took %s after a cancellation at 200ms, with 1 min timeouts", took)
		}
	})
	t.Run("a caller gone before the lookup does not dial", func(t *testing.T) {
		r := silentResolver(t, srv, nil, LDAPTimeouts{Dial: time.Minute, Request: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.ResolveContext(ctx, "alice"); !errors.Is(err, context.Canceled) {
			t.Fatalf("ResolveContext error %v, want the caller's cancellation", err)
		}
	})
}

// TestLDAPSilentDirectoryCache checks what the cache keeps of a lookup the
// silent directory never answered.
func TestLDAPSilentDirectoryCache(t *testing.T) {
	srv := silentldap.Start(t)
	t.Run("a timed-out lookup is cached as failed, never as a success", func(t *testing.T) {
		clock := newFakeClock()
		c := NewCache(silentResolver(t, srv, nil, LDAPTimeouts{Request: time.Second}), clock)
		ug, err := c.GetUserGroup("alice")
		if err == nil || !ug.Failed || !strings.Contains(err.Error(), "no answer from") {
			t.Fatalf("first lookup %+v, %v", ug, err)
		}
		dials := srv.Accepted()
		start := time.Now()
		ug, err = c.GetUserGroup("alice")
		if !errors.Is(err, ErrCachedFailure) || !ug.Failed || !reflect.DeepEqual(ug.Groups, []string{"alice"}) {
			t.Fatalf("second lookup %+v, %v; want YuniKorn's cached failure", ug, err)
		}
		if srv.Accepted() != dials || time.Since(start) > answerCeiling {
			t.Fatal("the cached failure went to the directory again")
		}
		// YuniKorn's ConvertUGI: the failure denies, unless forced.
		if _, err := c.ConvertUGI("alice", nil, false); !errors.Is(err, ErrCachedFailure) {
			t.Fatalf("ConvertUGI unforced: %v, want the failure", err)
		}
		if forced, err := c.ConvertUGI("alice", nil, true); err != nil || !reflect.DeepEqual(forced.Groups, []string{AnonymousGroup}) {
			t.Fatalf("ConvertUGI forced: %+v, %v; want nogroup", forced, err)
		}
	})
	t.Run("an abandoned lookup is not cached: the next one asks again", func(t *testing.T) {
		c := NewCache(silentResolver(t, srv, nil, LDAPTimeouts{Request: time.Minute}), newFakeClock())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		ug, err := c.GetUserGroupContext(ctx, "alice")
		if !errors.Is(err, context.Canceled) || !ug.Failed {
			t.Fatalf("abandoned lookup %+v, %v", ug, err)
		}
		dials := srv.Accepted()
		ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err := c.GetUserGroupContext(ctx, "alice"); errors.Is(err, ErrCachedFailure) || srv.Accepted() == dials {
			t.Fatalf("second lookup %v: want a new dial, not a cached entry", err)
		}
	})
	t.Run("the builtin answers the failure as a value under its caller's context", func(t *testing.T) {
		c := NewCache(silentResolver(t, srv, nil, LDAPTimeouts{Request: time.Minute}), newFakeClock())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		out, err := UserGroups(c).Call(ctx, []json.RawMessage{[]byte(`"alice"`)})
		var res struct {
			Groups []string
			Error  string
		}
		if err != nil || json.Unmarshal(out, &res) != nil || !reflect.DeepEqual(res.Groups, []string{"alice"}) ||
			!strings.Contains(res.Error, "lookup abandoned: context canceled") {
			t.Fatalf("Call = %s, %v", out, err)
		}
		if took := time.Since(start); took > answerCeiling {
			t.Fatalf("took %s after a cancellation at 200ms", took)
		}
	})
}

func TestLDAPTimeoutsDefaults(t *testing.T) {
	r := NewLDAPResolver(DefaultLDAPConfig())
	if r.Timeouts() != DefaultLDAPTimeouts() {
		t.Fatalf("NewLDAPResolver timeouts %+v", r.Timeouts())
	}
	if got := r.WithTimeouts(LDAPTimeouts{Request: -1}).Timeouts(); got != DefaultLDAPTimeouts() {
		t.Fatalf("non-positive bounds should be the defaults, got %+v", got)
	}
	if got := r.WithTimeouts(LDAPTimeouts{Dial: 7 * time.Second}); got.Timeouts().Dial != 7*time.Second || r.Timeouts() != DefaultLDAPTimeouts() {
		t.Fatal("WithTimeouts should return a copy")
	}
}
