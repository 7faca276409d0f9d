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

// NewGroupCache returns an empty group cache over a build's resolver. Each
// engine takes one when it is made and resolves through it alone: two
// engines in one process can serve configurations with different
// resolvers. Engines share a cache only when given the same one, which is
// how a program gets YuniKorn's one cache per scheduler.
func NewGroupCache(g translate.GroupResolution) *builtins.Cache {
	return builtins.NewCache(g.Resolver(), builtins.SystemClock{})
}

// GroupCached is implemented by the engines that resolve groups in
// process (native, rego, wasm, opa-wasm): GroupCache is the engine's own
// cache.
type GroupCached interface {
	GroupCache() *builtins.Cache
}

// noneCache is the cache of an engine that was given none: YuniKorn's
// default resolver, which needs no host.
func noneCache(c *builtins.Cache) *builtins.Cache {
	if c != nil {
		return c
	}
	return builtins.NewCache(builtins.NoResolver{}, builtins.SystemClock{})
}

// WasmBuiltins are aclc's builtins for the wazero host, over c.
func WasmBuiltins(c *builtins.Cache) map[string]wasm.BuiltinFunc {
	m := map[string]wasm.BuiltinFunc{}
	userGroups := builtins.UserGroups(c).Func
	for _, d := range opabuiltins.Decls() {
		name := d.Name
		if name == opabuiltins.UserGroups { // the hot path: no lookup by name
			m[name] = func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) { return userGroups(args) }
			continue
		}
		m[name] = func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
			return opabuiltins.Call(c, name, args)
		}
	}
	return m
}

// nativeResolver gives the reference decision the build's resolution: the
// engine's cache when the bundle calls the host builtin, the bare resolver
// when the answers are compiled in.
func nativeResolver(g translate.GroupResolution, c *builtins.Cache) yunikorn.GroupResolver {
	if g.NeedsHostBuiltin() {
		return cachedGroups{c}
	}
	return resolverGroups{g.Resolver()}
}

type cachedGroups struct{ c *builtins.Cache }

func (g cachedGroups) UserGroups(user string) ([]string, error) {
	ug, err := g.c.GetUserGroup(user)
	return ug.Groups, err
}

type resolverGroups struct{ r builtins.Resolver }

func (r resolverGroups) UserGroups(user string) ([]string, error) { return r.r.Resolve(user) }
