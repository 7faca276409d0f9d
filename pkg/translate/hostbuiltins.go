package translate

import (
	"sort"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/family"
)

// HostBuiltins returns every builtin the host modules of policy/host call,
// over the group cache c (nil for their declarations alone), sorted by
// name: group resolution, and each family's own (family.Hosting). It is
// the one list the runtime adapters register: OPA's evaluator and Wasm
// engine (builtins/opabuiltins), and the wazero host.
func HostBuiltins(c *builtins.Cache) []builtins.Builtin {
	all := []builtins.Builtin{builtins.UserGroups(c)}
	for _, f := range families {
		if h, ok := f.(family.Hosting); ok {
			all = append(all, h.HostBuiltins()...)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}
