// Package family describes a source family: one kind of access-control
// source aclc reads (YuniKorn's configuration, VOV's ACLs), and how it is
// detected, loaded, validated and compiled into the data its policy reads.
//
// pkg/translate lists the families in one slice. A new family is a package
// that implements Family, and one line in that list; see
// docs/ARCHITECTURE.md.
package family

import (
	"errors"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// CodeKindMismatch is the code of a source forced with --kind to a
// family other than the one that claims it by its content.
const CodeKindMismatch = "kind-mismatch"

// Codes lists the codes of this package's errors.
func Codes() []source.CodeInfo {
	return []source.CodeInfo{
		source.ErrorCode(CodeKindMismatch, "a source of one family forced to another with --kind (a VOV ACL source read as YuniKorn's configuration)"),
	}
}

// ErrKindMismatch is matched by a KindError.
var ErrKindMismatch = errors.New("source of another kind")

type kindMismatch struct{}

func (kindMismatch) Sentinel() error { return ErrKindMismatch }

// KindError is a source forced with --kind to a family other than the one
// that claims it (CodeKindMismatch), located at the source; it matches
// ErrKindMismatch.
type KindError = source.Error[kindMismatch]

// Input is one source: a file's content, or a directory read as a mounted
// ConfigMap.
type Input struct {
	Name string
	Data []byte
	Dir  string
}

// Family is one kind of source.
type Family interface {
	// Kinds are the values of --kind that force the family's reading of
	// every source of a command line.
	Kinds() []string
	// Describe says what the family's sources are, for messages: "a VOV
	// ACL source (top-level vov: key)".
	Describe() string
	// Claims reports whether the family reads in when no kind is forced,
	// by its content alone: it does not load in, which may still fail to
	// load.
	Claims(in Input) bool
	// Policies are the directories of policy/rego that hold the family's
	// decisions; a bundle carries those its compiled sources name.
	Policies() []string
	// HostModules are the modules of the family's policy that a build
	// calling aclc's builtins swaps for their twins in policy/host.
	HostModules() []HostModule
	// Compile loads, validates and compiles in together with the family's
	// sources compiled before (prev, nil for none), since some sources
	// only make sense together (YuniKorn's two ConfigMaps). On an error
	// nothing is returned; the error names the source and, where it can,
	// the line.
	Compile(prev Compiled, in []Input) (Compiled, error)
}

// HostModule is a module of policy/rego and its twin in policy/host,
// which calls one of aclc's builtins where the module answers in plain
// Rego.
type HostModule struct {
	// Portable and Host are the modules' paths in their directories:
	// "yunikorn/groups_static.rego", "yunikorn/groups_host.rego".
	Portable, Host string
	// Use says what the twin calls a builtin for, and so which builds
	// swap it in.
	Use BuiltinUse
}

// BuiltinUse is what a policy calls aclc's builtins for.
type BuiltinUse int

// What policies call aclc's builtins for.
const (
	// ResolveGroups: the groups of a user whose request carries none, in a
	// build whose resolver is not compiled into the data.
	ResolveGroups BuiltinUse = iota + 1
	// DecodeAdmission: Kubernetes objects of an admission review, decoded
	// as the API server does, in a build that is not portable.
	DecodeAdmission
)

// Compiled is one family's validated, normalised sources. It is not
// changed once returned.
type Compiled interface {
	// Files names the sources, in the order they were given.
	Files() []string
	// Data returns the documents the family's policy reads under
	// data.aclc, by key. groups is the build's group resolution (the
	// resolver's name and, for a static build, its answers); a family
	// whose decisions resolve groups puts its keys in its documents.
	Data(groups map[string]any) map[string]any
	// Policies are the directories of policy/rego, among the family's,
	// that a bundle of these sources carries.
	Policies() []string
}

// Hosting is a Family whose host modules call builtins of its own, beside
// group resolution (which every build offers): the runtimes register them
// with the rest (translate.HostBuiltins).
type Hosting interface {
	Family
	// HostBuiltins are those builtins, sorted by name.
	HostBuiltins() []builtins.Builtin
}

// Resolving is a Compiled whose sources choose how the groups of a user
// whose request carries none are resolved, when the build does not say.
type Resolving interface {
	Compiled
	// Resolver returns the sources' choice; false when they make none
	// (a family that reads a resolver from a file that does not set one).
	Resolver() (ResolverChoice, bool)
}

// ResolverChoice is the group resolver a family's sources choose.
type ResolverChoice struct {
	// Spec is the resolver, as --resolver takes it: "none", "os",
	// "test", "file=PATH", "ldap".
	Spec string
	// Hint is added to an error opening the resolver: where the choice
	// comes from and how to make another, "" for nothing to add.
	Hint string
}
