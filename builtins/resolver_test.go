package builtins

import (
	"errors"
	"os/user"
	"slices"
	"strings"
	"testing"
)

// resolveCase is one user looked up through a resolver.
type resolveCase struct {
	name    string
	user    string
	want    []string
	wantErr string // "" for success
}

func runResolveCases(t *testing.T, r Resolver, cases []resolveCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(tc.user)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Resolve(%q) groups = %q, want %q", tc.user, got, tc.want)
			}
			if errText(err) != tc.wantErr {
				t.Errorf("Resolve(%q) error = %q, want %q", tc.user, errText(err), tc.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTestResolver pins every row of YuniKorn's test resolver table
// (spec §7.4, usergroup_test_resolver.go; upstream TestGetUserGroup,
// TestBrokenUserGroup, TestGetUserGroupFail).
func TestTestResolver(t *testing.T) {
	runResolveCases(t, TestResolver{}, []resolveCase{
		{"testuser1 primary group then its one group id",
			"testuser1", []string{"group1000", "group1001"}, ""},
		{"testuser2 primary gid below 1000 stays a raw gid",
			"testuser2", []string{"100", "group1001", "group1002"}, ""},
		{"testuser3 primary group is not repeated from the group ids",
			"testuser3", []string{"group1001", "group1002", "group1003", "group1004"}, ""},
		{"testuser4 gids below 1000 stay raw and the primary is skipped",
			"testuser4", []string{"901", "902"}, ""},
		{"testuser5 group id failure keeps the primary group",
			"testuser5", []string{"group1001"}, "lookup failed for user: testuser5"},
		{"invalid-gid-user non-numeric primary gid stays raw, group ids fail",
			"invalid-gid-user", []string{"1_001"}, "lookup failed for user: invalid-gid-user"},
		{"testuser without a number is unknown",
			"testuser", nil, "lookup failed for user: testuser"},
		{"any other user is unknown",
			"alice", nil, "lookup failed for user: alice"},
		{"the empty user is unknown to the resolver itself",
			"", nil, "lookup failed for user: "},
	})
	wantUsers := []string{"invalid-gid-user", "testuser1", "testuser2", "testuser3", "testuser4", "testuser5"}
	if got := TestResolverUsers(); !slices.Equal(got, wantUsers) {
		t.Errorf("TestResolverUsers() = %q, want %q", got, wantUsers)
	}
	if got := (TestResolver{}).Name(); got != "test" {
		t.Errorf("Name() = %q, want test", got)
	}
}

// TestTestResolverGroupLookup pins the test resolver's group id rule
// (spec §7.4): ids below 1000 fail with YuniKorn's text, non-numeric ids
// fail, the rest are "group"+gid.
func TestTestResolverGroupLookup(t *testing.T) {
	for _, tc := range []struct {
		name, gid, want, wantErr string
	}{
		{"gid 1000 and above is named group+gid", "1000", "group1000", ""},
		{"gid below 1000 fails", "999", "", "lookup failed for group: 999"},
		{"gid 0 fails", "0", "", "lookup failed for group: 0"},
		{"non-numeric gid fails", "1_001", "", `strconv.Atoi: parsing "1_001": invalid syntax`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := testLookupGroupID(tc.gid)
			if errText(err) != tc.wantErr {
				t.Fatalf("error = %q, want %q", errText(err), tc.wantErr)
			}
			if err == nil && g.Name != tc.want {
				t.Errorf("name = %q, want %q", g.Name, tc.want)
			}
		})
	}
}

// TestNoResolver pins YuniKorn's default resolver (spec §7.4,
// usergroup_no_resolver.go): the user name is the only group, whatever it
// holds, and the lookup never fails.
func TestNoResolver(t *testing.T) {
	runResolveCases(t, NoResolver{}, []resolveCase{
		{"user name is the only group", "alice", []string{"alice"}, ""},
		{"invalid characters are echoed", "invaliduser><+", []string{"invaliduser><+"}, ""},
		{"service account user is echoed", "system:serviceaccount:ns:sa", []string{"system:serviceaccount:ns:sa"}, ""},
		{"spaces are echoed", "a b", []string{"a b"}, ""},
	})
	if got := (NoResolver{}).Name(); got != "none" {
		t.Errorf("Name() = %q, want none", got)
	}
}

// fakeOS is a host for OSResolver: users by name, group names by gid, group
// ids by user name (a missing entry makes GroupIds fail).
type fakeOS struct {
	users    map[string]string // name → primary gid
	groups   map[string]string // gid → name
	groupIDs map[string][]string
}

func (h fakeOS) resolver() OSResolver {
	return OSResolver{
		Lookup: func(name string) (*user.User, error) {
			gid, ok := h.users[name]
			if !ok {
				return nil, user.UnknownUserError(name)
			}
			return &user.User{Uid: "1", Gid: gid, Username: name}, nil
		},
		LookupGroupID: func(gid string) (*user.Group, error) {
			n, ok := h.groups[gid]
			if !ok {
				return nil, user.UnknownGroupIdError(gid)
			}
			return &user.Group{Gid: gid, Name: n}, nil
		},
		GroupIDs: func(u *user.User) ([]string, error) {
			ids, ok := h.groupIDs[u.Username]
			if !ok {
				return nil, errors.New("user: list groups for " + u.Username + ": not supported")
			}
			return ids, nil
		},
	}
}

// TestOSResolver pins the os resolver's use of os/user (spec §7.3 miss
// steps 1-2, §7.4) with injected lookups.
func TestOSResolver(t *testing.T) {
	host := fakeOS{
		users:  map[string]string{"alice": "100", "bob": "100", "carol": "555", "dave": "100", "erin": "100"},
		groups: map[string]string{"100": "staff", "200": "dev", "300": "ops"},
		groupIDs: map[string][]string{
			"alice": {"200", "300"},
			"bob":   {"200", "100", "300"},
			"carol": {"555", "999", "200"},
			"erin":  {"300", "200"},
		},
	}
	runResolveCases(t, host.resolver(), []resolveCase{
		{"primary group first, then group ids in order",
			"alice", []string{"staff", "dev", "ops"}, ""},
		{"repeated primary group is skipped",
			"bob", []string{"staff", "dev", "ops"}, ""},
		{"raw gid when the group name lookup fails",
			"carol", []string{"555", "999", "dev"}, ""},
		{"group ids keep their order, not sorted",
			"erin", []string{"staff", "ops", "dev"}, ""},
		{"GroupIds failure keeps the primary group and fails",
			"dave", []string{"staff"}, "user: list groups for dave: not supported"},
		{"unknown user fails with os/user's error",
			"mallory", nil, "user: unknown user mallory"},
	})
	if got := (OSResolver{}).Name(); got != "os" {
		t.Errorf("Name() = %q, want os", got)
	}
}

// TestOSResolverCurrentUser runs the os resolver against the host's own
// os/user for the current user: the primary group comes first (spec §7.3).
func TestOSResolverCurrentUser(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skipf("no current user: %v", err)
	}
	if _, err := user.Lookup(me.Username); err != nil {
		t.Skipf("current user %q does not look up by name: %v", me.Username, err)
	}
	groups, err := OSResolver{}.Resolve(me.Username)
	if len(groups) == 0 {
		t.Fatalf("Resolve(%q) = no groups, error %v", me.Username, err)
	}
	wantPrimary := me.Gid
	if g, gerr := user.LookupGroupId(me.Gid); gerr == nil {
		wantPrimary = g.Name
	}
	if groups[0] != wantPrimary {
		t.Errorf("Resolve(%q)[0] = %q, want primary group %q (all: %q)", me.Username, groups[0], wantPrimary, groups)
	}
	t.Logf("%s: %q (error %v)", me.Username, groups, err)
}

// TestNewResolver pins the command-line forms of the resolvers.
func TestNewResolver(t *testing.T) {
	for _, tc := range []struct {
		name, spec, wantName, wantErr string
	}{
		{"none is the no-resolver", "none", "none", ""},
		{"os is the os resolver", "os", "os", ""},
		{"test is the test resolver", "test", "test", ""},
		{"file= needs a path", "file=", "", `unknown resolver "file=": file= needs a path (want none, os, test, file=PATH or ldap=DIR)`},
		{"ldap= needs a directory", "ldap=", "", `unknown resolver "ldap=": ldap= needs the directory of the LDAP secret (want none, os, test, file=PATH or ldap=DIR)`},
		{"a missing file fails to load", "file=testdata/does-not-exist", "", "load file resolver: open testdata/does-not-exist: no such file or directory"},
		{"names are case-sensitive", "OS", "", `unknown resolver "OS": want none, os, test, file=PATH or ldap=DIR`},
		{"empty spec names no resolver", "", "", `unknown resolver "": want none, os, test, file=PATH or ldap=DIR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewResolver(tc.spec)
			if errText(err) != tc.wantErr {
				t.Fatalf("NewResolver(%q) error = %q, want %q", tc.spec, errText(err), tc.wantErr)
			}
			if err != nil {
				if strings.HasPrefix(tc.wantErr, "unknown resolver") && !errors.Is(err, ErrUnknownResolver) {
					t.Errorf("error %v is not ErrUnknownResolver", err)
				}
				return
			}
			if r.Name() != tc.wantName {
				t.Errorf("Name() = %q, want %q", r.Name(), tc.wantName)
			}
		})
	}
}

// TestResolverForConfigType pins YuniKorn's exact, case-sensitive selection
// from usergroupresolver.type (spec §6.7).
func TestResolverForConfigType(t *testing.T) {
	for _, tc := range []struct{ name, typ, want string }{
		{"test selects the test resolver", "test", "test"},
		{"os selects the os resolver", "os", "os"},
		{"ldap selects ldap", "ldap", "ldap"},
		{"empty selects the no-resolver", "", "none"},
		{"upper case OS selects the no-resolver", "OS", "none"},
		{"unknown type selects the no-resolver", "bogus", "none"},
		{"none itself selects the no-resolver", "none", "none"},
		{"surrounding space is not trimmed", " os", "none"},
		{"file is not a YuniKorn type", "file", "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ResolverForConfigType(tc.typ); got != tc.want {
				t.Errorf("ResolverForConfigType(%q) = %q, want %q", tc.typ, got, tc.want)
			}
		})
	}
}
