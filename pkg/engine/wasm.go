package engine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/topdown"
	opabuiltin "github.com/open-policy-agent/opa/v1/topdown/builtins"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/wasm"
)

// WasmEngine evaluates a Wasm bundle on aclc's own wazero host.
type WasmEngine struct {
	p     *wasm.Policy
	eps   map[string]wasm.Entrypoint
	cache *builtins.Cache
	// opaCalls is set when the module calls one of OPA's builtins on the
	// host (sprintf, time.now_ns, object.subset...): each evaluation then
	// carries a builtin context of its own (see opaHostBuiltins).
	opaCalls bool
}

// NewWasm loads a Wasm bundle (.tar.gz bytes) on aclc's host, with aclc's
// builtins over c (nil: YuniKorn's default resolver), given to this policy
// alone through its Config, and OPA's builtins that a module calls on the
// host served as OPA's Wasm engine serves them (aclc's own bundles call
// none of these).
func NewWasm(ctx context.Context, bundle []byte, cfg wasm.Config, c *builtins.Cache) (*WasmEngine, error) {
	c = noneCache(c)
	aclc := WasmBuiltins(c)
	opa := opaHostBuiltins(aclc)
	p, err := wasm.Load(ctx, bundle, cfg.WithBuiltins(aclc).WithValueBuiltins(opa))
	if err != nil {
		return nil, err
	}
	e := &WasmEngine{p: p, eps: map[string]wasm.Entrypoint{}, cache: c}
	for _, name := range p.Builtins() {
		if _, ok := opa[name]; ok {
			e.opaCalls = true
		}
	}
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
	hctx := ctx
	if e.opaCalls {
		hctx = withOPABuiltinContext(ctx)
	}
	// The host interrupts a running evaluation when ctx is done.
	out, err := h.Eval(hctx, input)
	if errors.Is(err, wasm.ErrUndefined) {
		return nil, fmt.Errorf("%s: undefined", ep)
	}
	return out, stopped(ctx, err)
}

// opaBuiltinContextKey is the context key of an evaluation's builtin
// context for OPA's builtins.
type opaBuiltinContextKey struct{}

// withOPABuiltinContext gives an evaluation the builtin context OPA's Wasm
// engine gives each of its evaluations: one time (time.now_ns answers the
// same within an evaluation) and one builtin cache.
func withOPABuiltinContext(ctx context.Context) context.Context {
	bctx := &topdown.BuiltinContext{
		Context: ctx,
		Metrics: metrics.New(),
		Seed:    rand.Reader,
		Time:    ast.NumberTerm(json.Number(strconv.FormatInt(time.Now().UnixNano(), 10))),
		Cancel:  topdown.NewCancel(),
		Cache:   opabuiltin.Cache{},
	}
	return context.WithValue(ctx, opaBuiltinContextKey{}, bctx)
}

// opaHostBuiltins serves every builtin OPA implements in topdown, and a
// module calls on the host, over Rego values as OPA's Wasm engine passes
// them (sets stay sets), in the evaluation's builtin context; names in
// skip (aclc's, given over JSON) are left out. A builtin's error makes
// the call undefined.
func opaHostBuiltins(skip map[string]wasm.BuiltinFunc) map[string]wasm.ValueBuiltinFunc {
	m := map[string]wasm.ValueBuiltinFunc{}
	for _, b := range ast.Builtins {
		fn := topdown.GetBuiltin(b.Name)
		if _, ok := skip[b.Name]; ok || fn == nil {
			continue
		}
		name := b.Name
		m[name] = func(ctx context.Context, args [][]byte) ([]byte, error) {
			bctx, ok := ctx.Value(opaBuiltinContextKey{}).(*topdown.BuiltinContext)
			if !ok {
				return nil, fmt.Errorf("%s: no builtin context", name)
			}
			operands := make([]*ast.Term, len(args))
			for i, a := range args {
				term, err := ast.ParseTerm(string(a))
				if err != nil {
					return nil, fmt.Errorf("%s: operand %d: %w", name, i+1, err)
				}
				operands[i] = term
			}
			var res *ast.Term
			if err := fn(*bctx, operands, func(t *ast.Term) error { res = t; return nil }); err != nil || res == nil {
				return nil, err
			}
			return []byte(res.String()), nil
		}
	}
	return m
}

// GroupCache implements GroupCached.
func (e *WasmEngine) GroupCache() *builtins.Cache { return e.cache }

// Close implements Engine.
func (e *WasmEngine) Close(ctx context.Context) error { return e.p.Close(ctx) }

// Policy returns the loaded Wasm policy.
func (e *WasmEngine) Policy() *wasm.Policy { return e.p }
