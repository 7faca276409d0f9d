package yunikorn

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The ACL parser's own name rules. They are narrower than the configuration
// regexes (UserRegExp, GroupRegExp): YuniKorn never widened them, so users
// such as "system:serviceaccount:ns:sa" and groups such as "dotted.group" are
// silently dropped from every ACL.
var (
	aclUserRegExp  = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9_.@-]*[$]?$`)
	aclGroupRegExp = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9_-]*$`)
)

const (
	wildcard  = "*"
	separator = ","
	space     = " "
)

// ACL is a parsed YuniKorn access control list. It only ever grants: there is
// no deny entry.
type ACL struct {
	// AllowAll is true for the wildcard forms: "*" as the whole trimmed string,
	// as the entire user list, or as the entire group list.
	AllowAll bool
	// Users and Groups are the accepted names, matched exactly and
	// case-sensitively.
	Users  map[string]struct{}
	Groups map[string]struct{}
	// Dropped lists the entries that YuniKorn discards without an error
	// because they fail the ACL name regexes. Kept for diagnostics only.
	Dropped []DroppedName
}

// DroppedName is an ACL entry that the ACL parser discards silently.
type DroppedName struct {
	Kind string // "user" or "group"
	Name string
}

// ParseACL parses an ACL string exactly as YuniKorn's security.NewACL does.
//
// The only error is more than one U+0020 in the untrimmed string; YuniKorn
// returns the zero (deny-all) ACL with it, and so does ParseACL.
func ParseACL(s string) (ACL, error) {
	acl := ACL{Users: map[string]struct{}{}, Groups: map[string]struct{}{}}
	if s == "" {
		return acl, nil
	}
	fields := strings.Split(s, space)
	if len(fields) > 2 {
		return ACL{Users: map[string]struct{}{}, Groups: map[string]struct{}{}},
			fmt.Errorf("multiple spaces found in ACL: '%s'", s)
	}
	acl.AllowAll = strings.TrimSpace(s) == wildcard

	users := strings.Split(fields[0], separator)
	if len(users) == 1 && users[0] == wildcard {
		acl.AllowAll = true
	} else {
		acl.addNames(users, "user", aclUserRegExp, acl.Users)
	}
	if len(fields) == 2 && !acl.AllowAll {
		groups := strings.Split(fields[1], separator)
		if len(groups) == 1 && groups[0] == wildcard {
			// A wildcard group list admits everybody and discards the users.
			acl.Users = map[string]struct{}{}
			acl.AllowAll = true
		} else {
			acl.addNames(groups, "group", aclGroupRegExp, acl.Groups)
		}
	}
	return acl, nil
}

func (a *ACL) addNames(names []string, kind string, re *regexp.Regexp, into map[string]struct{}) {
	for _, n := range names {
		if n == "" {
			continue
		}
		if !re.MatchString(n) {
			a.Dropped = append(a.Dropped, DroppedName{Kind: kind, Name: n})
			continue
		}
		into[n] = struct{}{}
	}
}

// Grant says why an ACL admits a principal.
type Grant struct {
	Everybody bool
	User      string // set when the user list matched
	Group     string // set when a group matched
}

func (g Grant) String() string {
	switch {
	case g.Everybody:
		return "everybody"
	case g.Group != "":
		return `group "` + g.Group + `"`
	default:
		return `user "` + g.User + `"`
	}
}

// Check applies YuniKorn's access check order: wildcard, then the user
// name, then each group in the order given. The user name is never compared
// with the group set, nor a group with the user set.
func (a ACL) Check(user string, groups []string) (Grant, bool) {
	if a.AllowAll {
		return Grant{Everybody: true}, true
	}
	if _, ok := a.Users[user]; ok {
		return Grant{User: user}, true
	}
	for _, g := range groups {
		if _, ok := a.Groups[g]; ok {
			return Grant{Group: g}, true
		}
	}
	return Grant{}, false
}

// SortedUsers returns the user set in sorted order.
func (a ACL) SortedUsers() []string { return sortedKeys(a.Users) }

// SortedGroups returns the group set in sorted order.
func (a ACL) SortedGroups() []string { return sortedKeys(a.Groups) }

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String renders the ACL's effect in a short human form.
func (a ACL) String() string {
	if a.AllowAll {
		return "everybody"
	}
	if len(a.Users) == 0 && len(a.Groups) == 0 {
		return "nobody"
	}
	var parts []string
	if len(a.Users) > 0 {
		parts = append(parts, "users "+strings.Join(a.SortedUsers(), ","))
	}
	if len(a.Groups) > 0 {
		parts = append(parts, "groups "+strings.Join(a.SortedGroups(), ","))
	}
	return strings.Join(parts, "; ")
}
