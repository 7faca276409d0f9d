// Package host embeds the Rego modules that call aclc's host builtins, and
// lists those builtins. The modules live apart from the portable library so
// that stock OPA (opa test, opa build) never sees a function it does not
// know.
package host

import (
	"embed"
	"sort"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

//go:embed all:yunikorn all:admission all:vov
var files embed.FS

// Modules returns the modules keyed by their path in this directory, e.g.
// "yunikorn/groups_host.rego".
func Modules() map[string]string { return policy.Collect(files, false) }

// Builtins returns every builtin these modules call, group resolution over
// c among them, sorted by name: the one list the runtime adapters register
// (OPA's evaluator and Wasm engine, the wazero host).
func Builtins(c *builtins.Cache) []builtins.Builtin {
	all := append([]builtins.Builtin{builtins.UserGroups(c)}, admission.Builtins()...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}
