package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// NativeEngine answers from the sources with aclc's reference code; it
// never reads a bundle.
type NativeEngine struct {
	src      *translate.Sources
	cache    *builtins.Cache
	resolver builtins.GroupResolver
}

// NewNative returns the reference engine over parsed sources, resolving
// groups as the sources' build does, through c (nil: a new cache over the
// sources' resolver).
func NewNative(src *translate.Sources, c *builtins.Cache) *NativeEngine {
	if c == nil {
		c = NewGroupCache(src.Groups())
	}
	return &NativeEngine{src: src, cache: c, resolver: nativeResolver(src.Groups(), c)}
}

// GroupCache implements GroupCached.
func (n *NativeEngine) GroupCache() *builtins.Cache { return n.cache }

// Name implements Engine.
func (*NativeEngine) Name() string { return Native }

// Eval implements Engine: the reference code of the decision's descriptor.
func (n *NativeEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	d, ok := translate.LookupDecision(ep)
	if !ok {
		return nil, unknownEntrypoint(ep, n.src.Entrypoints())
	}
	out, err := d.Native(translate.NativeCall{Sources: n.src, Groups: resolverIn(ctx, n.resolver)}, input)
	if errors.Is(err, translate.ErrNotProvided) {
		return nil, unknownEntrypoint(ep, n.src.Entrypoints())
	}
	return out, err
}

// Close implements Engine.
func (*NativeEngine) Close(context.Context) error { return nil }
