// Package opabuiltins registers aclc's custom builtins with OPA: their type
// declarations for the compiler (and for `opa build --capabilities`), and
// their implementations for OPA's evaluator and OPA's Wasm engine.
//
// # Notes
//
// No group cache lives here: each engine or server owns one and passes it
// in, per query (Functions) where OPA's API allows it, and through the
// evaluation's context (WithCache) where OPA only consults its
// process-wide registry (Register: OPA's Wasm SDK and OPA's server).
package opabuiltins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/builtins"
)

// UserGroups is the name of the group-resolution builtin.
const UserGroups = builtins.UserGroupsName

// Set lists the builtins a runtime offers, over a group cache (nil for
// their declarations alone). The caller that knows the policies passes it
// in: this package knows no builtin by name but group resolution, whose
// cache each evaluation brings.
type Set func(c *builtins.Cache) []builtins.Builtin

// Decls returns the declarations of the set's builtins, sorted by name,
// their types read from each builtin's Decl.
func Decls(set Set) ([]*ast.Builtin, error) {
	bs := set(nil)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
	var out []*ast.Builtin
	for _, b := range bs {
		t, err := types.Unmarshal(b.Decl)
		if err != nil {
			return nil, fmt.Errorf("declaration of %s: %w", b.Name, err)
		}
		f, ok := t.(*types.Function)
		if !ok {
			return nil, fmt.Errorf("declaration of %s: want a function type, got %v", b.Name, t)
		}
		out = append(out, &ast.Builtin{Name: b.Name, Description: b.Description, Decl: f, Nondeterministic: b.Nondeterministic})
	}
	return out, nil
}

// mustDecls is Decls for the sets of this program, whose declarations are
// fixed at build time: a malformed one is a programming error, which its
// tests catch.
func mustDecls(set Set) []*ast.Builtin {
	ds, err := Decls(set)
	if err != nil {
		panic(err)
	}
	return ds
}

// Capabilities returns OPA's capabilities for this version plus the
// set's builtins, for compiling policies that call them.
func Capabilities(set Set) *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = append(caps.Builtins, mustDecls(set)...)
	return caps
}

// ErrNoCache is returned, wrapped, when aclc.user_groups runs in an
// evaluation that was given no group cache.
var ErrNoCache = errors.New("no group cache for this evaluation")

type cacheKey struct{}

// WithCache returns a context under which evaluations by process-wide
// registrations (Register) resolve groups through c. OPA's Wasm SDK and
// OPA's server look builtins up only in OPA's global registry, so the
// engine or server that owns c passes it down with each evaluation.
func WithCache(ctx context.Context, c *builtins.Cache) context.Context {
	return context.WithValue(ctx, cacheKey{}, c)
}

// CacheFrom returns the cache WithCache put in ctx, or nil.
func CacheFrom(ctx context.Context) *builtins.Cache {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(cacheKey{}).(*builtins.Cache)
	return c
}

// Functions returns rego options that give one query aclc's builtins over
// c: OPA's per-query registration, with no process-wide state. When
// Register has also run in the process, OPA's evaluator prefers the global
// implementation, which finds c only through WithCache: an engine that
// uses Functions also evaluates under WithCache(ctx, c).
func Functions(set Set, c *builtins.Cache) []func(*rego.Rego) {
	var out []func(*rego.Rego)
	for _, d := range mustDecls(set) {
		name := d.Name
		arity := len(d.Decl.FuncArgs().Args)
		out = append(out, rego.FunctionDyn(&rego.Function{
			Name: name, Description: d.Description, Decl: d.Decl, Nondeterministic: d.Nondeterministic,
		}, func(bctx rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
			return call(bctx.Context, set, c, name, terms[:min(arity, len(terms))])
		}))
	}
	return out
}

var registerOnce sync.Once

// Register adds the set's builtins to OPA's global registries, once per
// process (the first set registered is the one OPA keeps), for the
// runtimes that resolve builtins only there: OPA's Wasm SDK and OPA's
// server. The implementations hold no cache of their own; each call uses
// the cache of its evaluation's context (WithCache), and fails with
// ErrNoCache without one.
func Register(set Set) {
	registerOnce.Do(func() {
		for _, d := range mustDecls(set) {
			name := d.Name
			arity := len(d.Decl.FuncArgs().Args)
			rego.RegisterBuiltinDyn(&rego.Function{
				Name: name, Description: d.Description, Decl: d.Decl, Nondeterministic: d.Nondeterministic,
			}, func(bctx rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
				c := CacheFrom(bctx.Context)
				if c == nil && name == builtins.UserGroupsName {
					return nil, fmt.Errorf("%s: %w", name, ErrNoCache)
				}
				// OPA passes the output variable after the operands.
				return call(bctx.Context, set, c, name, terms[:min(arity, len(terms))])
			})
		}
	})
}

// Call runs the set's named builtin on JSON arguments over c.
func Call(set Set, c *builtins.Cache, name string, args []json.RawMessage) (json.RawMessage, error) {
	return CallContext(context.Background(), set, c, name, args)
}

// CallContext is Call under the caller's context: a group lookup stops
// waiting for the directory when ctx is done.
func CallContext(ctx context.Context, set Set, c *builtins.Cache, name string, args []json.RawMessage) (json.RawMessage, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	for _, b := range set(c) {
		if b.Name == name {
			return b.Call(ctx, args)
		}
	}
	return nil, fmt.Errorf("unknown builtin %s", name)
}

// RawArgument is the JSON text an object value was parsed from.
type RawArgument struct {
	Value ast.Object
	JSON  json.RawMessage
}

type rawArgumentsKey struct{}

// WithRawArguments tells the builtins called under ctx the JSON text of
// values the caller parsed from it (an admission review's object, parsed
// with the rest of the input): a builtin handed that very value (the same
// object, not an equal one) is given the text as its argument instead of
// a new encoding of the value. Each text must decode to its value.
func WithRawArguments(ctx context.Context, raw ...RawArgument) context.Context {
	if len(raw) == 0 {
		return ctx
	}
	return context.WithValue(ctx, rawArgumentsKey{}, raw)
}

// rawArgument is the text of v when the context has it.
func rawArgument(ctx context.Context, v ast.Value) json.RawMessage {
	obj, ok := v.(ast.Object)
	if !ok {
		return nil
	}
	raw, _ := ctx.Value(rawArgumentsKey{}).([]RawArgument)
	for _, r := range raw {
		if r.Value == obj {
			return r.JSON
		}
	}
	return nil
}

func call(ctx context.Context, set Set, c *builtins.Cache, name string, terms []*ast.Term) (*ast.Term, error) {
	args := make([]json.RawMessage, len(terms))
	for i, t := range terms {
		if raw := rawArgument(ctx, t.Value); raw != nil {
			args[i] = raw
			continue
		}
		a, err := appendJSON(nil, t.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: operand %d: %w", name, i+1, err)
		}
		args[i] = a
	}
	out, err := CallContext(ctx, set, c, name, args)
	if err != nil || out == nil {
		return nil, err
	}
	var v any
	if err := util.UnmarshalJSON(out, &v); err != nil {
		return nil, err
	}
	t, err := ast.InterfaceToValue(v)
	if err != nil {
		return nil, err
	}
	return ast.NewTerm(t), nil
}
