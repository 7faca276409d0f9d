// Package target describes the outputs of aclc build: each target (an OPA
// bundle of Rego or of Wasm, Gatekeeper's templates, Kubernetes' own
// admission policies) is a package of its own that fills in a Target, and
// the CLI lists the targets once. What a target is called, the build flags
// it does not take, whether the build opens the sources' group resolver
// and the file it writes by default all come from its Target, as do the
// help, the refusals and the completion of --target.
//
// The package also writes what a target builds: one file (or standard
// output), or Kubernetes objects as one YAML stream or one file each in a
// directory, with nothing half-written on failure.
package target

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// Target is one output of aclc build.
type Target struct {
	// Name is the --target value: "rego".
	Name string
	// Describe says what it writes, for --target's help: "plain Rego +
	// data, for any OPA".
	Describe string
	// DefaultOutput is the file written without --output-file.
	DefaultOutput string
	// Refuses names the build flags the target does not take (without
	// their dashes), each with the whole message that refuses it.
	Refuses map[string]string
	// ReadsResolver is set when the build opens the group resolver the
	// sources choose; a target whose output resolves no group at build
	// time reads the sources without it (an LDAP secret need not be at
	// hand).
	ReadsResolver bool
	// Build writes the target's output of s; nil for a target the CLI
	// still writes itself.
	Build func(ctx context.Context, s *translate.Sources, o Options) (*Output, error)
}

// Options are the build's choices a target reads.
type Options struct {
	// HostBuiltins builds the form that calls aclc's builtins.
	HostBuiltins bool
	// Signing signs a bundle; nil for none.
	Signing *translate.Signing
	// Revision is the manifest's revision; "" for the default.
	Revision string
	// Clock gives a signed bundle without Revision its revision.
	Clock func() time.Time
	// Sources name the SOURCE arguments as messages do.
	Sources []string
	// Version is aclc's, written into what the target records of itself.
	Version string
}

// Output is what a target built.
type Output struct {
	// Data is the one file written.
	Data []byte
	// Summary says what Data is, after "wrote FILE (": "rego bundle,
	// 1234 bytes, ...".
	Summary string
	// Warnings are said after the file is written.
	Warnings []string
}

// Names lists the names of targets, in order.
func Names(ts []Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// Lookup returns the target of that name.
func Lookup(ts []Target, name string) (Target, bool) {
	i := slices.IndexFunc(ts, func(t Target) bool { return t.Name == name })
	if i < 0 {
		return Target{}, false
	}
	return ts[i], true
}

// List says the names as messages do: "rego, wasm, gatekeeper or
// kubernetes".
func List(ts []Target) string {
	names := Names(ts)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Help is --target's help text: each target and what it writes.
func Help(ts []Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Name + " (" + t.Describe + ")"
	}
	return "what to build: " + strings.Join(parts, ", ")
}
