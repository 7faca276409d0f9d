package builtins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GroupResolver gives the groups of a user: the one contract the reference
// decisions (pkg/acl/yunikorn, pkg/acl/vov) resolve a user whose request
// carries no groups through. Every Resolver is one, uncached, and so is a
// Cache, YuniKorn's cache over a Resolver.
type GroupResolver interface {
	// Resolve returns the user's groups in YuniKorn's order. A non-nil error means the lookup
	// failed; groups may still hold what was found before the failure (YuniKorn keeps the primary group).
	Resolve(user string) ([]string, error)
}

// Resolver looks one user up, without caching (YuniKorn's lookup + group id lookups).
//
// Implementations are safe for concurrent use and return a slice the caller
// owns.
type Resolver interface {
	GroupResolver
	Name() string // "none", "os", "test", "file", "ldap"
}

// ContextResolver is a Resolver whose lookup waits on something outside
// the process, a directory: ResolveContext stops waiting when ctx is done,
// and its error then wraps ctx's cause (errors.Is(err, context.Canceled)).
type ContextResolver interface {
	Resolver
	ResolveContext(ctx context.Context, user string) ([]string, error)
}

// ResolveContext resolves user through r, under ctx when r is a
// ContextResolver; the other resolvers answer from the process at once.
func ResolveContext(ctx context.Context, r Resolver, user string) ([]string, error) {
	if cr, ok := r.(ContextResolver); ok {
		return cr.ResolveContext(ctx, user)
	}
	return r.Resolve(user)
}

// Resolver names, as NewResolver and ResolverForConfigType spell them.
const (
	ResolverNone = "none"
	ResolverOS   = "os"
	ResolverTest = "test"
	ResolverFile = "file"
	// ResolverLDAP is YuniKorn's LDAP resolver; its configuration is a
	// directory of key files (LDAPSecretsDir unless given).
	ResolverLDAP = "ldap"
)

// ErrUnknownResolver is returned, wrapped, by NewResolver for a spec that
// names no resolver.
var ErrUnknownResolver = errors.New("unknown resolver")

// NewResolver builds a resolver from its command-line form:
// "none" | "os" | "test" | "file=PATH" | "ldap=DIR" ("ldap" alone reads
// YuniKorn's LDAPSecretsDir); the ldap forms take options, see ParseLDAPSpec.
func NewResolver(spec string) (Resolver, error) {
	switch spec {
	case ResolverNone:
		return NoResolver{}, nil
	case ResolverOS:
		return OSResolver{}, nil
	case ResolverTest:
		return TestResolver{}, nil
	}
	if path, ok := strings.CutPrefix(spec, ResolverFile+"="); ok {
		if path == "" {
			return nil, fmt.Errorf("%w %q: file= needs a path (want none, os, test, file=PATH or ldap=DIR)", ErrUnknownResolver, spec)
		}
		return LoadFileResolver(path)
	}
	if ls, ok, err := ParseLDAPSpec(spec); ok {
		if err != nil {
			return nil, err
		}
		r, err := LoadLDAPResolver(ls.Dir)
		if err != nil {
			return nil, err
		}
		return r.WithTimeouts(ls.Timeouts), nil
	}
	return nil, fmt.Errorf("%w %q: want none, os, test, file=PATH or ldap=DIR", ErrUnknownResolver, spec)
}

// LDAPSpec is the command-line form of the ldap resolver, parsed.
type LDAPSpec struct {
	Dir      string       // the secret directory: LDAPSecretsDir unless given
	Timeouts LDAPTimeouts // zero fields: the defaults
}

// The options of the ldap resolver's command-line form, aclc's own (YuniKorn
// has no such settings).
const (
	LDAPOptionDialTimeout = "dial-timeout"
	LDAPOptionTimeout     = "timeout"
)

// ParseLDAPSpec reads "ldap" or "ldap=DIR", each optionally followed by
// ",dial-timeout=D" and ",timeout=D" (Go durations, such as 2s or 500ms):
// the bounds of connecting and of the bind and search together. Options
// are taken from the end, so a DIR holding a comma still reads as written.
// ok is false when spec does not name the ldap resolver.
func ParseLDAPSpec(spec string) (s LDAPSpec, ok bool, err error) {
	rest, found := strings.CutPrefix(spec, ResolverLDAP)
	if !found || (rest != "" && rest[0] != '=' && rest[0] != ',') {
		return s, false, nil
	}
	seen := map[string]bool{}
	for {
		i := strings.LastIndexByte(rest, ',')
		if i < 0 {
			break
		}
		key, value, _ := strings.Cut(rest[i+1:], "=")
		var bound *time.Duration
		switch key {
		case LDAPOptionDialTimeout:
			bound = &s.Timeouts.Dial
		case LDAPOptionTimeout:
			bound = &s.Timeouts.Request
		}
		if bound == nil {
			if rest[0] == '=' {
				break // the comma is the directory's
			}
			return s, true, fmt.Errorf("%w %q: unknown ldap option %q (want %s=D or %s=D)", ErrUnknownResolver, spec, rest[i+1:], LDAPOptionDialTimeout, LDAPOptionTimeout)
		}
		if seen[key] {
			return s, true, fmt.Errorf("%w %q: %s given twice", ErrUnknownResolver, spec, key)
		}
		seen[key] = true
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return s, true, fmt.Errorf("%w %q: %s=%s: want a positive duration such as 5s", ErrUnknownResolver, spec, key, value)
		}
		*bound = d
		rest = rest[:i]
	}
	switch {
	case rest == "":
		s.Dir = LDAPSecretsDir
	case rest == "=":
		return s, true, fmt.Errorf("%w %q: ldap= needs the directory of the LDAP secret (want none, os, test, file=PATH or ldap=DIR)", ErrUnknownResolver, spec)
	case rest[0] == '=':
		s.Dir = rest[1:]
	default:
		return s, true, fmt.Errorf("%w %q: want ldap or ldap=DIR, then options ,%s=D ,%s=D", ErrUnknownResolver, spec, LDAPOptionDialTimeout, LDAPOptionTimeout)
	}
	return s, true, nil
}

// ResolverForConfigType is YuniKorn's resolver selection from a partition's
// usergroupresolver.type (security.GetUserGroupCache, spec §6.7): "test",
// "os" and "ldap" are matched exactly and case-sensitively; anything else,
// "" and "OS" included, selects the no-resolver. The result is a resolver
// name; "ldap" needs its directory, which the caller supplies.
func ResolverForConfigType(t string) string {
	switch t {
	case ResolverTest, ResolverOS, ResolverLDAP:
		return t
	}
	return ResolverNone
}

// lookupFuncs are YuniKorn's three injectable lookups of a UserGroupCache.
// Keeping them separate lets the none, test and os resolvers share one copy
// of YuniKorn's resolution order instead of re-deriving it three times.
type lookupFuncs struct {
	lookup        func(name string) (*user.User, error)
	lookupGroupID func(gid string) (*user.Group, error)
	groupIDs      func(u *user.User) ([]string, error)
}

// resolve is UserGroupCache.GetUserGroup's resolution step (spec §7.3, miss
// step 1-2) without the cache.
func (f lookupFuncs) resolve(name string) ([]string, error) {
	u, err := f.lookup(name)
	if u == nil {
		return nil, err
	}
	groups, gerr := f.resolveGroups(u)
	if gerr != nil {
		return groups, gerr
	}
	// YuniKorn marks the entry failed when lookup errs even though a user
	// came back; the error is the only failure signal a Resolver has.
	return groups, err
}

// resolveGroups is YuniKorn's UserGroup.resolveGroups: the primary group
// first, then the group ids in order without the primary; a group whose name
// does not resolve is kept as its raw id.
func (f lookupFuncs) resolveGroups(u *user.User) ([]string, error) {
	groups := []string{f.groupName(u.Gid)}
	gids, err := f.groupIDs(u)
	if err != nil {
		return groups, err
	}
	for _, gid := range gids {
		if gid == u.Gid {
			continue
		}
		groups = append(groups, f.groupName(gid))
	}
	return groups, nil
}

func (f lookupFuncs) groupName(gid string) string {
	g, err := f.lookupGroupID(gid)
	if err != nil || g == nil {
		return gid
	}
	return g.Name
}

// NoResolver is YuniKorn's default resolver (usergroup_no_resolver.go): every
// user exists, with the user name as its only group. It never fails, whatever
// characters the name holds.
type NoResolver struct{}

// Name implements Resolver.
func (NoResolver) Name() string { return ResolverNone }

// Resolve implements Resolver.
func (NoResolver) Resolve(name string) ([]string, error) { return noLookups.resolve(name) }

var noLookups = lookupFuncs{
	lookup: func(name string) (*user.User, error) {
		return &user.User{Uid: "-1", Gid: name, Username: name}, nil
	},
	lookupGroupID: func(gid string) (*user.Group, error) {
		return &user.Group{Gid: gid, Name: gid}, nil
	},
	groupIDs: func(*user.User) ([]string, error) { return []string{}, nil },
}

// TestResolver is YuniKorn's test resolver (usergroup_test_resolver.go): a
// fixed table of six users, every other user fails. Group ids of 1000 and
// above are named "group"+gid; lower or non-numeric ids fail to resolve and
// stay raw ids.
type TestResolver struct{}

// Name implements Resolver.
func (TestResolver) Name() string { return ResolverTest }

// Resolve implements Resolver.
func (TestResolver) Resolve(name string) ([]string, error) { return testLookups.resolve(name) }

// testUser is one row of YuniKorn's test resolver table (spec §7.4).
type testUser struct {
	uid, gid string
	groupIDs []string // nil: GroupIds fails
}

var testUsers = map[string]testUser{
	"testuser1":        {uid: "1000", gid: "1000", groupIDs: []string{"1001"}},
	"testuser2":        {uid: "100", gid: "100", groupIDs: []string{"1001", "1002"}},
	"testuser3":        {uid: "1001", gid: "1001", groupIDs: []string{"1002", "1001", "1003", "1004"}},
	"testuser4":        {uid: "901", gid: "901", groupIDs: []string{"901", "902"}},
	"testuser5":        {uid: "1001", gid: "1001"},
	"invalid-gid-user": {uid: "1001", gid: "1_001"},
}

// TestResolverUsers returns, sorted, the users YuniKorn's test resolver
// knows, for a build that compiles its answers into bundle data; every other
// user fails the lookup. Some of them fail too (testuser5, invalid-gid-user).
func TestResolverUsers() []string {
	return slices.Sorted(maps.Keys(testUsers))
}

var testLookups = lookupFuncs{
	lookup: func(name string) (*user.User, error) {
		tu, ok := testUsers[name]
		if !ok {
			return nil, lookupFailed(name)
		}
		return &user.User{Uid: tu.uid, Gid: tu.gid, Username: name}, nil
	},
	lookupGroupID: testLookupGroupID,
	groupIDs: func(u *user.User) ([]string, error) {
		tu := testUsers[u.Username]
		if tu.groupIDs == nil {
			return nil, lookupFailed(u.Username)
		}
		return append([]string(nil), tu.groupIDs...), nil
	},
}

func testLookupGroupID(gid string) (*user.Group, error) {
	id, err := strconv.Atoi(gid)
	if err != nil {
		return nil, err
	}
	if id < 1000 {
		return nil, fmt.Errorf("lookup failed for group: %s", gid)
	}
	return &user.Group{Gid: gid, Name: "group" + gid}, nil
}

// lookupFailed is the error of the test and file resolvers for a user they
// do not know, with YuniKorn's test-resolver text.
func lookupFailed(name string) error {
	return fmt.Errorf("lookup failed for user: %s", name)
}

// OSResolver is YuniKorn's os resolver (usergroup_os_resolver.go): Go's
// os/user. The zero value uses os/user; the fields replace single lookups so
// tests need not depend on the host's users.
type OSResolver struct {
	// Lookup finds a user by name; nil means user.Lookup.
	Lookup func(name string) (*user.User, error)
	// LookupGroupID finds a group by id; nil means user.LookupGroupId.
	LookupGroupID func(gid string) (*user.Group, error)
	// GroupIDs lists a user's group ids; nil means (*user.User).GroupIds.
	GroupIDs func(u *user.User) ([]string, error)
}

// Name implements Resolver.
func (OSResolver) Name() string { return ResolverOS }

// Resolve implements Resolver.
func (r OSResolver) Resolve(name string) ([]string, error) {
	f := lookupFuncs{lookup: r.Lookup, lookupGroupID: r.LookupGroupID, groupIDs: r.GroupIDs}
	if f.lookup == nil {
		f.lookup = user.Lookup
	}
	if f.lookupGroupID == nil {
		f.lookupGroupID = user.LookupGroupId
	}
	if f.groupIDs == nil {
		f.groupIDs = (*user.User).GroupIds
	}
	return f.resolve(name)
}
