package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// Target is what Open opens an engine on.
type Target struct {
	// Sources are compiled sources with their group resolution settled.
	// The native engine answers from them; the others run Bundle, or a
	// bundle built from them when Bundle is nil.
	Sources *translate.Sources
	// Bundle is a built bundle: its Rego for the rego engine, its
	// policy.wasm for wasm and opa-wasm.
	Bundle *bundle.Bundle
	// Resolver is a --resolver value that overrides the group resolution a
	// Bundle without Sources records (see translate.BundleGroupResolution).
	Resolver string
	// URL is the base URL of the http engine's server.
	URL string
	// Cache is the engine's group cache; nil: a new one over the group
	// resolution, so that nothing about groups is process-wide.
	Cache *builtins.Cache
	// Wasm configures aclc's Wasm host; nil: wasm.NewConfig(). Open adds
	// aclc's builtins.
	Wasm *wasm.Config
}

// ErrUnknownEngine is returned, wrapped, by Open for a name Names does not
// list.
var ErrUnknownEngine = errors.New("unknown engine")

// ErrNoPolicyWasm is returned, wrapped, by Open for a Wasm engine on a
// bundle without policy.wasm.
var ErrNoPolicyWasm = errors.New("no policy.wasm")

// Names returns the engines Open opens, as the CLI's --engine flag takes
// them.
func Names() []string { return []string{Native, Rego, Wasm, OPAWasm, HTTP} }

// InProcess returns the engines that evaluate in this process.
func InProcess() []string { return []string{Native, Rego, Wasm, OPAWasm} }

// Open opens the named engine on t: native on t.Sources, rego, wasm and
// opa-wasm on t.Bundle or a bundle built from t.Sources, http at t.URL.
func Open(ctx context.Context, name string, t Target) (Engine, error) {
	switch name {
	case HTTP:
		return NewHTTP(t.URL)
	case Native, Rego, Wasm, OPAWasm:
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownEngine, name)
	}
	s, b := t.Sources, t.Bundle
	if s == nil && (b == nil || name == Native) {
		return nil, fmt.Errorf("the %s engine needs sources", name)
	}
	var g translate.GroupResolution
	if s != nil {
		g = s.Groups()
	} else {
		var err error
		if g, err = translate.BundleGroupResolution(b.Data, t.Resolver); err != nil {
			return nil, err
		}
	}
	cache := t.Cache
	if cache == nil {
		cache = NewGroupCache(g)
	}
	switch name {
	case Native:
		return NewNative(s, cache), nil
	case Rego:
		if b == nil {
			var err error
			if b, err = translate.RegoBundle(s); err != nil {
				return nil, err
			}
		}
		if s != nil {
			return NewRego(b, s.Entrypoints(), cache), nil
		}
		return NewRego(b, BundleEntrypoints(b), cache), nil
	}
	if b == nil {
		var err error
		if b, err = translate.WasmBundle(ctx, s); err != nil {
			return nil, err
		}
	}
	if len(b.WasmModules) == 0 {
		return nil, fmt.Errorf("%w in the bundle", ErrNoPolicyWasm)
	}
	if name == OPAWasm {
		return NewOPAWasm(ctx, b, cache)
	}
	raw, err := translate.BundleBytes(b)
	if err != nil {
		return nil, err
	}
	cfg := wasm.NewConfig()
	if t.Wasm != nil {
		cfg = *t.Wasm
	}
	return NewWasm(ctx, raw, cfg, cache)
}
