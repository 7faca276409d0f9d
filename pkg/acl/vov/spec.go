package vov

import (
	"github.com/aclc-dev/aclc/builtins"
)

// Spec is a loaded VOV ACL source: the project, its objects with their
// ACLs, the VOV user groups, FairShare membership and the role rules.
type Spec struct {
	File    string
	Project string
	Owner   string // the project owner, who runs vovserver
	Host    string // the vovserver host
	// Resolver is the OS-group resolver as written ("" when absent);
	// ResolverSpec is its --resolver form with a file= path made relative
	// to the working directory ("none" when absent).
	Resolver     string
	ResolverSpec string
	// Security is the security.tcl path as written; SecurityFile is where
	// it was read. Both are "" when the rules are inline or absent.
	Security     string
	SecurityFile string
	// Rules are the role rules: security.tcl's (file or inline) in file
	// order, then the roles: entries.
	Rules []SecurityRule

	UserGroups map[string][]string // VOV user group -> members
	FSGroups   map[string][]string // FairShare group -> users
	Objects    []*Object

	// Lines of the vov: keys, for diagnostics (0 when absent).
	OwnerLine, HostLine, SecurityLine int
	// OwnerColumn is the column of the owner: key.
	OwnerColumn int

	byKey    map[string]*Object
	resolver builtins.Resolver
}

// Lookup finds an object by its name or its id.
func (s *Spec) Lookup(key string) *Object {
	if s == nil {
		return nil
	}
	if s.byKey != nil {
		return s.byKey[key]
	}
	for _, o := range s.Objects { // a Spec built by hand, not by Load
		if o.Name == key || o.ID == key {
			return o
		}
	}
	return nil
}

// Groups returns the spec's own resolver (none when the source names
// none), uncached.
func (s *Spec) Groups() builtins.GroupResolver {
	if s.resolver == nil {
		return builtins.NoResolver{}
	}
	return s.resolver
}

// index builds the lookup by name and id. Load has checked that every key
// is unique.
func (s *Spec) index() {
	s.byKey = make(map[string]*Object, 2*len(s.Objects))
	for _, o := range s.Objects {
		if o.Name != "" {
			s.byKey[o.Name] = o
		}
		if o.ID != "" {
			s.byKey[o.ID] = o
		}
	}
}
