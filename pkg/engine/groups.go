package engine

import (
	"context"
	"encoding/json"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// UseGroupResolution installs the process-wide group cache for a build's
// resolver and registers aclc's builtins with OPA. Every engine of the
// process then resolves through the same cache, as YuniKorn's process-wide
// resolver does.
func UseGroupResolution(g translate.GroupResolution) {
	opabuiltins.Register()
	opabuiltins.SetCache(builtins.NewCache(g.Resolver(), builtins.SystemClock{}))
}

// ResetGroupCache empties the process-wide group cache.
func ResetGroupCache() { opabuiltins.Cache().Reset() }

// WasmBuiltins are aclc's builtins for the wazero host, reading the same
// process-wide cache as OPA's runtimes.
func WasmBuiltins() map[string]wasm.BuiltinFunc {
	m := map[string]wasm.BuiltinFunc{}
	for _, d := range opabuiltins.Decls() {
		name := d.Name
		m[name] = func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
			if name == opabuiltins.UserGroups { // the hot path: no lookup by name
				return builtins.UserGroups(opabuiltins.Cache()).Func(args)
			}
			return opabuiltins.Call(name, args)
		}
	}
	return m
}

// nativeResolver gives the reference decision the build's resolution: the
// shared cache when the bundle calls the host builtin, the bare resolver
// when the answers are compiled in.
func nativeResolver(g translate.GroupResolution) yunikorn.GroupResolver {
	if g.NeedsHostBuiltin() {
		return cachedGroups{}
	}
	return resolverGroups{g.Resolver()}
}

type cachedGroups struct{}

func (cachedGroups) UserGroups(user string) ([]string, error) {
	ug, err := opabuiltins.Cache().GetUserGroup(user)
	return ug.Groups, err
}

type resolverGroups struct{ r builtins.Resolver }

func (r resolverGroups) UserGroups(user string) ([]string, error) { return r.r.Resolve(user) }
