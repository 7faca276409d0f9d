package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/wasm"
)

// WasmEngine evaluates a Wasm bundle on aclc's own wazero host.
type WasmEngine struct {
	p     *wasm.Policy
	eps   map[string]wasm.Entrypoint
	cache *builtins.Cache
}

// NewWasm loads a Wasm bundle (.tar.gz bytes) on aclc's host, with aclc's
// builtins over c (nil: YuniKorn's default resolver), given to this policy
// alone through its Config.
func NewWasm(ctx context.Context, bundle []byte, cfg wasm.Config, c *builtins.Cache) (*WasmEngine, error) {
	c = noneCache(c)
	p, err := wasm.Load(ctx, bundle, cfg.WithBuiltins(WasmBuiltins(c)))
	if err != nil {
		return nil, err
	}
	e := &WasmEngine{p: p, eps: map[string]wasm.Entrypoint{}, cache: c}
	for _, name := range p.Entrypoints() {
		ep, err := p.Entrypoint(name)
		if err != nil {
			p.Close(ctx)
			return nil, err
		}
		e.eps[name] = ep
	}
	return e, nil
}

// Name implements Engine.
func (*WasmEngine) Name() string { return Wasm }

// Eval implements Engine.
func (e *WasmEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	h, ok := e.eps[ep]
	if !ok {
		return nil, unknownEntrypoint(ep, e.p.Entrypoints())
	}
	if out := nonCanonical(ep, input); out != nil {
		return out, nil
	}
	// The host interrupts a running evaluation when ctx is done.
	out, err := h.Eval(ctx, input)
	if errors.Is(err, wasm.ErrUndefined) {
		return nil, fmt.Errorf("%s: undefined", ep)
	}
	return out, stopped(ctx, err)
}

// GroupCache implements GroupCached.
func (e *WasmEngine) GroupCache() *builtins.Cache { return e.cache }

// Close implements Engine.
func (e *WasmEngine) Close(ctx context.Context) error { return e.p.Close(ctx) }

// Policy returns the loaded Wasm policy.
func (e *WasmEngine) Policy() *wasm.Policy { return e.p }
