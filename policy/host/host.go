// Package host embeds the Rego modules that call aclc's host builtins
// (listed, with their implementations, by the families that own the
// modules: translate.HostBuiltins). The modules live apart from the portable library so
// that stock OPA (opa test, opa build) never sees a function it does not
// know.
package host

import (
	"embed"

	policy "github.com/aclc-dev/aclc/policy/rego"
)

//go:embed all:yunikorn all:admission all:vov
var files embed.FS

// Modules returns the modules keyed by their path in this directory, e.g.
// "yunikorn/groups_host.rego".
func Modules() map[string]string { return policy.Collect(files, false) }
