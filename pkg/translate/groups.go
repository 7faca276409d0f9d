package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/family"
)

// GroupResolution says how a bundle resolves the groups of a request that
// carries none.
type GroupResolution struct {
	// Spec is the resolver: "none", "os", "test", "file=PATH" or "ldap=DIR".
	Spec string
	// Static compiles the resolver's answers into the bundle's data, so the
	// bundle needs no custom builtin (none, test and file only).
	Static bool

	resolver builtins.Resolver
	// frozen is set for a YuniKorn release whose group cache never
	// expires an entry (release.GroupCacheNeverExpires).
	frozen bool
}

// Clock is the clock a group cache of this resolution runs on: the wall
// clock, or the never-set clock of the YuniKorn releases whose cache never
// expires an entry.
func (g GroupResolution) Clock() builtins.Clock {
	if g.frozen {
		return builtins.ZeroClock{}
	}
	return builtins.SystemClock{}
}

// ErrResolver is returned, wrapped, for a resolver that cannot be used.
var ErrResolver = errors.New("resolver")

// ErrNeedsHostBuiltin is returned, wrapped, by WithPortable when no bundle
// without aclc's builtins decides the sources as YuniKorn does.
var ErrNeedsHostBuiltin = errors.New("needs aclc's host builtins")

// WithGroupResolution returns a copy of the sources that resolves groups
// with the resolver spec names; spec "" takes the sources' own choice:
// that of the first family, in the order of families, whose compiled
// sources make one (YuniKorn's first partition's usergroupresolver.type,
// else the VOV source's resolver), else none. One build resolves groups
// one way: YuniKorn and VOV decisions of a bundle share the resolver
// (each engine has its own cache).
//
// A configuration whose type is ldap reads YuniKorn's fixed directory,
// /run/secrets/ldap, as YuniKorn does; spec "ldap=DIR" reads another.
func (s *Sources) WithGroupResolution(spec string, static bool) (*Sources, error) {
	hint := ""
	if spec == "" {
		spec, hint = s.chosenResolver()
	}
	g, err := NewGroupResolution(spec, static)
	if err != nil {
		if hint != "" {
			return nil, fmt.Errorf("%w; %s", err, hint)
		}
		return nil, err
	}
	c := s.with()
	c.groups = g
	return c, nil
}

// NewGroupResolution checks a --resolver value and opens the resolver.
func NewGroupResolution(spec string, static bool) (GroupResolution, error) {
	r, err := builtins.NewResolver(spec)
	if err != nil {
		return GroupResolution{}, fmt.Errorf("%w: %w", ErrResolver, err)
	}
	if static && (r.Name() == builtins.ResolverOS || r.Name() == builtins.ResolverLDAP) {
		return GroupResolution{}, fmt.Errorf("%w: the %s resolver asks at decision time and cannot be compiled into a bundle; drop --static-groups", ErrResolver, r.Name())
	}
	return GroupResolution{Spec: spec, Static: static, resolver: r}, nil
}

// BundleGroupResolution returns the resolution a built bundle was made
// for, from its data; spec, when set, overrides the resolver (it must be
// given for a file resolver, whose path the bundle does not record).
func BundleGroupResolution(data map[string]any, spec string) (GroupResolution, error) {
	aclc, _ := data["aclc"].(map[string]any)
	yk, _ := aclc["yunikorn"].(map[string]any)
	if yk == nil {
		yk, _ = aclc["vov"].(map[string]any) // a VOV-only bundle records its resolution there
	}
	name, _ := yk["resolver"].(string)
	_, static := yk["groups"]
	if spec == "" {
		switch name {
		case "", builtins.ResolverNone:
			spec = builtins.ResolverNone
		case builtins.ResolverFile:
			if static {
				spec = builtins.ResolverNone // answers are in the data; the resolver is not consulted
			} else {
				return GroupResolution{}, fmt.Errorf("%w: the bundle resolves groups from a file: pass --resolver file=PATH", ErrResolver)
			}
		case builtins.ResolverLDAP:
			spec = builtins.ResolverLDAP // YuniKorn's directory, unless --resolver ldap=DIR
		default:
			spec = name
		}
	}
	g, err := NewGroupResolution(spec, static)
	rel, _ := yk["release"].(map[string]any)
	switches, _ := rel["switches"].(map[string]any)
	g.frozen = switches[string(release.GroupCacheNeverExpires)] == true
	return g, err
}

// ConfiguredResolver is the group resolver the sources choose (the first
// compiled family that implements family.Resolving), none without a
// choice, as --resolver spells it. It opens nothing.
func (s *Sources) ConfiguredResolver() string {
	spec, _ := s.chosenResolver()
	return spec
}

// chosenResolver is ConfiguredResolver with the hint an error opening it
// carries.
func (s *Sources) chosenResolver() (spec, hint string) {
	for _, c := range s.compiled {
		if r, ok := c.(family.Resolving); ok {
			if choice, ok := r.Resolver(); ok {
				return choice.Spec, choice.Hint
			}
		}
	}
	return builtins.ResolverNone, ""
}

// Groups returns the group resolution of the build (none by default).
func (s *Sources) Groups() GroupResolution {
	g := s.groups
	if g.resolver == nil {
		g = GroupResolution{Spec: builtins.ResolverNone, resolver: builtins.NoResolver{}}
	}
	g.frozen = s.queues != nil && s.release.Has(release.GroupCacheNeverExpires)
	return g
}

// GroupsGiven reports whether the build was given its group resolution
// (WithGroupResolution, WithPortable), rather than none by default.
func (s *Sources) GroupsGiven() bool { return s.groups.resolver != nil }

// Resolver returns the chosen resolver.
func (g GroupResolution) Resolver() builtins.Resolver { return g.resolver }

// Revision identifies what the resolution answers from, beyond the
// bundle: the content of a file resolver's file, the configuration read
// from an LDAP secret directory (password included), the spec otherwise.
// A server compares it, with the bundle's revision, to tell whether a
// reload changed anything: a groups file can change while the bundle,
// which resolves through the builtin, stays the same. It is a digest and
// shows no content.
func (g GroupResolution) Revision() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%t\x00", g.Spec, g.Static)
	switch r := g.resolver.(type) {
	case *builtins.FileResolver:
		fmt.Fprintf(h, "file\x00%s", r.Digest())
	case *builtins.LDAPResolver:
		c, t := r.Config(), r.Timeouts()
		fmt.Fprintf(h, "ldap\x00%q\x00%d\x00%q\x00%q\x00%q\x00%q\x00%q\x00%q\x00%t\x00%t\x00%d\x00%d",
			c.Host, c.Port, c.BaseDN, c.Filter, c.GroupAttr, c.ReturnAttr, c.BindUser, string(c.BindPassword),
			c.Insecure, c.SSL, t.Dial, t.Request)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Files are the files and directories the resolution was read from: a
// file resolver's file, an LDAP secret directory. A server watches them
// beside the sources.
func (g GroupResolution) Files() []string {
	switch r := g.resolver.(type) {
	case *builtins.FileResolver:
		return []string{r.Path()}
	case *builtins.LDAPResolver:
		if r.Dir() != "" {
			return []string{r.Dir()}
		}
	}
	return nil
}

// AsksAtDecisionTime reports whether the resolver looks users up when a
// decision is made (os, ldap): no answers compiled into a bundle stand for
// it, so a bundle that resolves with it calls aclc.user_groups.
func (g GroupResolution) AsksAtDecisionTime() bool {
	if g.resolver == nil {
		return false
	}
	name := g.resolver.Name()
	return name == builtins.ResolverOS || name == builtins.ResolverLDAP
}

// WithPortable returns a copy of the sources in the form stock OPA and
// OPA's Wasm SDKs run, which calls no aclc builtin: the resolver's answers
// compiled into the data, admission objects decoded in plain Rego. It
// returns ErrNeedsHostBuiltin, wrapped, when the resolver asks at decision
// time. A Wasm build also refuses patterns OPA's Wasm might match
// otherwise than Go (ErrNotPortablePattern).
func (s *Sources) WithPortable() (*Sources, error) {
	g := s.Groups()
	if g.AsksAtDecisionTime() {
		return nil, fmt.Errorf("the %s resolver asks for groups at decision time and cannot be compiled into a bundle, which then %w (%s)", g.resolver.Name(), ErrNeedsHostBuiltin, builtins.UserGroupsName)
	}
	g.Static = true
	c := s.with()
	c.groups = g
	c.portable = true
	return c, nil
}

// WithPlainDecoding returns a copy of the sources whose bundle decodes
// admission objects in plain Rego, as WithPortable does, and resolves
// groups as s does: Gatekeeper's form of sources whose resolver asks at
// decision time, which then leaves out what resolves groups.
func (s *Sources) WithPlainDecoding() *Sources {
	c := s.with()
	c.portable = true
	return c
}

// NeedsHostBuiltin reports whether the bundle calls aclc.user_groups: every
// resolver but none, unless compiled in statically.
func (g GroupResolution) NeedsHostBuiltin() bool {
	return g.resolver != nil && g.resolver.Name() != builtins.ResolverNone && !g.Static
}

// StaticUsers are the users whose answers a static build compiles in: the
// file's users, or the test resolver's table (every other user fails the
// lookup, as in YuniKorn).
func (g GroupResolution) StaticUsers() []string {
	switch r := g.resolver.(type) {
	case *builtins.FileResolver:
		var users []string
		for u := range r.Users() {
			users = append(users, u)
		}
		sort.Strings(users)
		return users
	case builtins.TestResolver:
		return builtins.TestResolverUsers()
	}
	return nil
}

// Data is the resolution part of data.aclc.yunikorn and data.aclc.vov: the
// resolver's name and, for a static build, each known user's lookup result.
func (g GroupResolution) Data() map[string]any {
	name := builtins.ResolverNone
	if g.resolver != nil {
		name = g.resolver.Name()
	}
	out := map[string]any{"resolver": name}
	if !g.Static || name == builtins.ResolverNone {
		return out
	}
	users := map[string]any{}
	for _, u := range g.StaticUsers() {
		groups, err := g.resolver.Resolve(u)
		entry := map[string]any{"groups": append([]string{}, groups...)}
		if err != nil {
			entry["error"] = err.Error()
		}
		users[u] = entry
	}
	out["groups"] = users
	return out
}

// String renders the resolution for messages.
func (g GroupResolution) String() string {
	var b strings.Builder
	b.WriteString(g.Spec)
	if g.Static {
		b.WriteString(" (static)")
	}
	return b.String()
}
