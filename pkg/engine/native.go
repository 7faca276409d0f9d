package engine

import (
	"context"
	"encoding/json"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// NativeEngine answers from the sources with aclc's reference code; it
// never reads a bundle.
type NativeEngine struct {
	src      *translate.Sources
	resolver yunikorn.GroupResolver
}

// NewNative returns the reference engine over parsed sources, resolving
// groups as the sources' build does.
func NewNative(src *translate.Sources) *NativeEngine {
	return &NativeEngine{src: src, resolver: nativeResolver(src.Groups())}
}

// Name implements Engine.
func (*NativeEngine) Name() string { return Native }

// Eval implements Engine.
func (n *NativeEngine) Eval(_ context.Context, ep string, input []byte) (json.RawMessage, error) {
	switch ep {
	case translate.EntrypointYuniKornQueues:
		tree := n.src.Queues
		if tree == nil {
			tree = &yunikorn.QueueTree{}
		}
		return json.Marshal(tree.DecideJSON(input, n.resolver))
	}
	return nil, unknownEntrypoint(ep, n.src.Entrypoints())
}

// Close implements Engine.
func (*NativeEngine) Close(context.Context) error { return nil }
