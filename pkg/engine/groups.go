package engine

import (
	"context"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// NewGroupCache returns an empty group cache over a build's resolver. Each
// engine takes one when it is made and resolves through it alone: two
// engines in one process can serve configurations with different
// resolvers. Engines share a cache only when given the same one, which is
// how a program gets YuniKorn's one cache per scheduler.
func NewGroupCache(g translate.GroupResolution) *builtins.Cache {
	return builtins.NewCache(g.Resolver(), g.Clock())
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

// WasmBuiltins are aclc's builtins for the wazero host, over c: the host
// modules' list, as plain Go functions on JSON.
func WasmBuiltins(c *builtins.Cache) map[string]wasm.BuiltinFunc {
	m := map[string]wasm.BuiltinFunc{}
	for _, b := range translate.HostBuiltins(c) {
		// Call under the host's call context: a group lookup stops waiting
		// for the directory when the evaluation's caller gives up.
		m[b.Name] = b.Call
	}
	return m
}

// nativeResolver gives the reference decision the build's resolution: the
// engine's cache when the bundle calls the host builtin, the bare resolver
// when the answers are compiled in.
func nativeResolver(g translate.GroupResolution, c *builtins.Cache) builtins.GroupResolver {
	if g.NeedsHostBuiltin() {
		return cachedGroups{c: c}
	}
	return g.Resolver()
}

type cachedGroups struct {
	c   *builtins.Cache
	ctx context.Context // the evaluation's; nil: none
}

func (g cachedGroups) Resolve(user string) ([]string, error) {
	ctx := g.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ug, err := g.c.GetUserGroupContext(ctx, user)
	return ug.Groups, err
}

// resolverIn gives r the evaluation's context, so that a group lookup
// stops waiting for the directory when the caller gives up.
func resolverIn(ctx context.Context, r builtins.GroupResolver) builtins.GroupResolver {
	if g, ok := r.(cachedGroups); ok && ctx != nil {
		g.ctx = ctx
		return g
	}
	return r
}
