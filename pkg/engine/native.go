package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
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

// Eval implements Engine.
func (n *NativeEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	resolver := resolverIn(ctx, n.resolver)
	switch ep {
	case translate.EntrypointYuniKornQueues:
		tree := n.src.Queues
		if tree == nil {
			tree = &yunikorn.QueueTree{}
		}
		return json.Marshal(tree.DecideJSON(input, resolver))
	case translate.EntrypointYuniKornPlacement:
		tree := n.src.Queues
		if tree == nil {
			tree = &yunikorn.QueueTree{}
		}
		return json.Marshal(tree.PlaceJSON(input, resolver))
	case translate.EntrypointVOV:
		if n.src.VOV == nil {
			break
		}
		var in any
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("parse input: %w", err)
		}
		return json.Marshal(n.src.VOV.DecideJSONWith(in, resolver))
	case translate.EntrypointAdmissionReview:
		st := n.src.Admission
		if st == nil {
			st = admission.DefaultSettings()
		}
		return st.Review(input, ReplicatedNamespaces(n.src.Kubernetes)), nil
	case translate.EntrypointAdmissionQueue:
		if n.src.Queues == nil || n.src.Admission == nil {
			break
		}
		unique, noGang := n.src.QueueReviewFlags()
		q := &admission.QueueReview{Settings: n.src.Admission, Tree: n.src.Queues, Resolver: resolver,
			UniqueAppID: unique, DisableGangScheduling: noGang, Namespaces: ReplicatedNamespaces(n.src.Kubernetes)}
		return q.Review(input), nil
	}
	return nil, unknownEntrypoint(ep, n.src.Entrypoints())
}

// Close implements Engine.
func (*NativeEngine) Close(context.Context) error { return nil }

// ReplicatedNamespaces reads namespaces from kube-mgmt-shaped data
// ({"namespaces": {name: {"metadata": {"annotations": {...}}}}}).
func ReplicatedNamespaces(k8s map[string]any) map[string]admission.Namespace {
	out := map[string]admission.Namespace{}
	nss, _ := k8s["namespaces"].(map[string]any)
	for name, v := range nss {
		obj, _ := v.(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		ns := admission.Namespace{Name: name, Annotations: map[string]string{}}
		for k, a := range ann {
			if s, ok := a.(string); ok {
				ns.Annotations[k] = s
			}
		}
		out[name] = ns
	}
	return out
}
