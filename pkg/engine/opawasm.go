package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	_ "github.com/open-policy-agent/opa/v1/features/wasm" // registers OPA's Wasm engine
	"github.com/open-policy-agent/opa/v1/resolver"
	wasmresolver "github.com/open-policy-agent/opa/v1/resolver/wasm"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// OPAWasmEngine evaluates the same Wasm module with OPA's own Wasm engine.
type OPAWasmEngine struct {
	// resolvers are used one goroutine at a time. OPA's Wasm SDK returns
	// the result as a view of the instance's linear memory and hands the
	// instance back to its pool before the resolver parses that view, so
	// concurrent evaluations on one resolver can read each other's bytes
	// (seen as "failed to parse wasm result" under 8 goroutines). One
	// resolver per CPU keeps evaluations parallel without sharing one.
	resolvers chan *wasmresolver.Resolver
	refs      map[string]ast.Ref
	eps       []string
	cache     *builtins.Cache

	// What a resolver is made from, to replace one whose evaluation failed.
	newResolver func(context.Context) (*wasmresolver.Resolver, error)

	mu  sync.Mutex // guards all
	all map[*wasmresolver.Resolver]struct{}
}

// NewOPAWasm loads the bundle's policy.wasm and data into OPA's Wasm
// engine, resolving groups through c (nil: YuniKorn's default resolver).
//
// OPA's Wasm SDK finds builtins only in OPA's global registry, so aclc's
// builtins are registered there once per process; they hold no cache, and
// each evaluation hands them this engine's cache in its context.
func NewOPAWasm(ctx context.Context, b *bundle.Bundle, c *builtins.Cache) (*OPAWasmEngine, error) {
	if len(b.WasmModules) != 1 {
		return nil, fmt.Errorf("want one wasm module in the bundle, have %d", len(b.WasmModules))
	}
	opabuiltins.Register(translate.HostBuiltins)
	e := &OPAWasmEngine{refs: map[string]ast.Ref{}, cache: noneCache(c), all: map[*wasmresolver.Resolver]struct{}{}}
	var refs []ast.Ref
	for _, ep := range b.Manifest.WasmResolvers {
		ref, err := ast.PtrRef(ast.DefaultRootDocument, ep.Entrypoint)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
		e.refs[ep.Entrypoint] = ref
		e.eps = append(e.eps, ep.Entrypoint)
	}
	module, data := b.WasmModules[0].Raw, b.Data
	e.newResolver = func(ctx context.Context) (*wasmresolver.Resolver, error) {
		r, err := wasmresolver.NewWithContext(ctx, refs, module, data)
		if err != nil {
			return nil, fmt.Errorf("opa wasm engine: %w", err)
		}
		e.mu.Lock()
		e.all[r] = struct{}{}
		e.mu.Unlock()
		return r, nil
	}
	n := runtime.GOMAXPROCS(0)
	e.resolvers = make(chan *wasmresolver.Resolver, n)
	for range n {
		r, err := e.newResolver(ctx)
		if err != nil {
			e.closeAll()
			return nil, err
		}
		e.resolvers <- r
	}
	return e, nil
}

// Name implements Engine.
func (*OPAWasmEngine) Name() string { return OPAWasm }

// Eval implements Engine.
func (e *OPAWasmEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	ref, ok := e.refs[ep]
	if !ok {
		return nil, unknownEntrypoint(ep, e.eps)
	}
	if out := nonCanonical(ep, input); out != nil {
		return out, nil
	}
	t, err := opaWasmInput(input)
	if err != nil {
		return nil, err
	}
	var r *wasmresolver.Resolver
	select {
	case r = <-e.resolvers:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// OPA's Wasm SDK closes the module when ctx is done mid-evaluation.
	res, err := r.Eval(opabuiltins.WithCache(ctx, e.cache), resolver.Input{Ref: ref, Input: ast.NewTerm(t)})
	if err != nil {
		// A trap leaves OPA's Wasm instance in an unknown state, and OPA's
		// SDK would hand it out again: json.is_valid("true") traps, and
		// every later evaluation on that instance fails. A resolver whose
		// evaluation failed is never reused.
		if ctx.Err() != nil {
			// Cut off at the deadline: answer now, replace it aside.
			go e.replace(ctx, r)
		} else {
			e.replace(ctx, r)
		}
		return nil, stopped(ctx, err)
	}
	e.resolvers <- r
	if res.Value == nil {
		return nil, fmt.Errorf("%s: undefined", ep)
	}
	v, err := ast.JSON(res.Value)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// opaWasmInput is the input as OPA's Wasm resolver takes it. The resolver
// only writes its input's text (Term.String) into the guest, which parses
// it; so where the guest parses the request's own bytes as encoding/json
// decodes them, those bytes are handed over as they are, and the request
// is not parsed in Go, turned into OPA's AST and printed back first (three
// passes that took as long as the guest's own parse on a 2 MB Pod).
//
// The guest's parser differs from encoding/json on invalid UTF-8 and on
// UTF-16 surrogate escapes (decoded as U+FFFD by encoding/json); such an
// input takes the long way, through Go's decoder.
func opaWasmInput(input []byte) (ast.Value, error) {
	if utf8.Valid(input) && !hasSurrogateEscape(input) && json.Valid(input) {
		return rawJSON(input), nil
	}
	var in any
	if err := util.UnmarshalJSON(input, &in); err != nil {
		return nil, fmt.Errorf("parse input: %w", err)
	}
	return ast.InterfaceToValue(in)
}

// hasSurrogateEscape reports whether b has a \uD800-\uDFFF escape (or
// anything that starts like one): conservative, a false positive only
// costs the long way.
func hasSurrogateEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 {
			return false
		}
		b = b[i+2:]
		if len(b) > 0 && (b[0] == 'd' || b[0] == 'D') {
			return true
		}
	}
}

// rawJSON is a valid JSON text standing in for the AST value it denotes,
// for OPA's Wasm resolver, which reads nothing of its input but String.
// Compare and Hash work on the text; Find answers the whole value only.
type rawJSON []byte

func (r rawJSON) String() string          { return string(r) }
func (r rawJSON) StringLength() int       { return len(r) }
func (r rawJSON) IsGround() bool          { return true }
func (r rawJSON) Hash() int               { h := fnv.New64a(); h.Write(r); return int(h.Sum64()) }
func (r rawJSON) Compare(o ast.Value) int { return strings.Compare(string(r), o.String()) }
func (r rawJSON) Find(path ast.Ref) (ast.Value, error) {
	if len(path) == 0 {
		return r, nil
	}
	return nil, errors.New("find in a raw JSON input")
}

// GroupCache implements GroupCached.
func (e *OPAWasmEngine) GroupCache() *builtins.Cache { return e.cache }

// Close implements Engine.
func (e *OPAWasmEngine) Close(context.Context) error { e.closeAll(); return nil }

func (e *OPAWasmEngine) closeAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for r := range e.all {
		r.Close()
	}
	e.all = map[*wasmresolver.Resolver]struct{}{}
}

// replace closes a resolver and puts a new one in its place. When none can
// be made, the old one goes back, so the engine keeps its capacity and
// fails the next evaluation rather than blocking forever.
func (e *OPAWasmEngine) replace(ctx context.Context, old *wasmresolver.Resolver) {
	r, err := e.newResolver(context.WithoutCancel(ctx))
	if err != nil {
		e.resolvers <- old
		return
	}
	e.mu.Lock()
	delete(e.all, old)
	e.mu.Unlock()
	old.Close()
	e.resolvers <- r
}
