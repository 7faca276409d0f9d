package tests

import (
	"context"
	"fmt"
	"github.com/aclc-dev/aclc/pkg/acl/admission"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// EngineSet is every engine built over one set of sources.
type EngineSet struct {
	Sources *translate.Sources
	Engines []engine.Engine
}

// RegoStatic names the rego engine over a bundle whose group resolution is
// compiled into data (no custom builtin, as stock OPA runs it).
const RegoStatic = "rego-static"

type namedEngine struct {
	engine.Engine
	name string
}

func (n namedEngine) Name() string { return n.name }

// NewEngineSet builds the bundles once and opens every in-process engine
// on them. The native engine comes first: it is the reference. resolver is
// a --resolver value ("" for the configuration's choice). When the resolver
// can be compiled in, a rego engine over the static bundle joins too.
func NewEngineSet(ctx context.Context, inputs []Input, resolver string, kubernetes map[string]any) (*EngineSet, error) {
	return newEngineSet(ctx, inputs, resolver, kubernetes, false, translate.YuniKornRelease{})
}

// NewReleaseEngineSet is NewEngineSet (portable: NewPortableEngineSet)
// with the YuniKorn configuration read and decided as release rel.
func NewReleaseEngineSet(ctx context.Context, inputs []Input, resolver string, kubernetes map[string]any, portable bool, rel translate.YuniKornRelease) (*EngineSet, error) {
	return newEngineSet(ctx, inputs, resolver, kubernetes, portable, rel)
}

// NewPortableEngineSet is NewEngineSet over bundles built with --portable:
// no aclc builtin, groups compiled into data.
func NewPortableEngineSet(ctx context.Context, inputs []Input, resolver string, kubernetes map[string]any) (*EngineSet, error) {
	return newEngineSet(ctx, inputs, resolver, kubernetes, true, translate.YuniKornRelease{})
}

func newEngineSet(ctx context.Context, inputs []Input, resolver string, kubernetes map[string]any, portable bool, rel translate.YuniKornRelease) (*EngineSet, error) {
	return newEngineSetWith(ctx, inputs, resolver, kubernetes, portable, rel, nil)
}

// NewGuardOffEngineSet is NewReleaseEngineSet with the admission guard's
// parts off turned off, in the bundles and in the reference alike.
func NewGuardOffEngineSet(ctx context.Context, inputs []Input, resolver string, kubernetes map[string]any, portable bool, rel translate.YuniKornRelease, off []admission.GuardPart) (*EngineSet, error) {
	return newEngineSetWith(ctx, inputs, resolver, kubernetes, portable, rel, func(s *translate.Sources) *translate.Sources { return s.WithGuardOff(off) })
}

func newEngineSetWith(ctx context.Context, inputs []Input, resolver string, kubernetes map[string]any, portable bool, rel translate.YuniKornRelease, with func(*translate.Sources) *translate.Sources) (*EngineSet, error) {
	s, err := (&translate.Sources{}).WithYuniKornRelease(rel)
	if err != nil {
		return nil, err
	}
	if err := AddTo(s, inputs); err != nil {
		return nil, err
	}
	s, err = s.WithKubernetes(kubernetes).WithGroupResolution(resolver, portable)
	if err != nil {
		return nil, err
	}
	if portable {
		s = s.WithPlainDecoding()
	}
	if with != nil {
		s = with(s)
	}
	rb, err := translate.RegoBundle(s)
	if err != nil {
		return nil, fmt.Errorf("rego bundle: %w", err)
	}
	wb, err := translate.WasmBundle(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("wasm bundle: %w", err)
	}
	set := &EngineSet{Sources: s}
	// Every engine gets its own cache: nothing about groups is shared.
	pool := wasm.NewConfig().WithPoolSize(2)
	for _, t := range []struct {
		name   string
		bundle *bundle.Bundle
	}{{engine.Native, nil}, {engine.Rego, rb}, {engine.Wasm, wb}, {engine.OPAWasm, wb}} {
		e, err := engine.Open(ctx, t.name, engine.Target{Sources: s, Bundle: t.bundle, Wasm: &pool})
		if err != nil {
			set.Close(ctx)
			return nil, fmt.Errorf("%s engine: %w", t.name, err)
		}
		set.Engines = append(set.Engines, e)
	}
	if !portable && s.Groups().NeedsHostBuiltin() {
		st, err := (&translate.Sources{}).WithYuniKornRelease(rel)
		if err != nil {
			return nil, err
		}
		if err := AddTo(st, inputs); err != nil {
			return nil, err
		}
		if st, err := st.WithKubernetes(kubernetes).WithGroupResolution(resolver, true); err == nil {
			e, err := engine.Open(ctx, engine.Rego, engine.Target{Sources: st})
			if err != nil {
				set.Close(ctx)
				return nil, fmt.Errorf("static rego bundle: %w", err)
			}
			set.Engines = append(set.Engines, namedEngine{e, RegoStatic})
		}
	}
	return set, nil
}

// ResetGroups empties e's group cache, so that it decides the next case as
// a freshly started scheduler would.
func ResetGroups(e engine.Engine) {
	if n, ok := e.(namedEngine); ok {
		e = n.Engine
	}
	if gc, ok := e.(engine.GroupCached); ok {
		gc.GroupCache().Reset()
	}
}

// Close closes every engine.
func (s *EngineSet) Close(ctx context.Context) {
	for _, e := range s.Engines {
		_ = e.Close(ctx)
	}
}
