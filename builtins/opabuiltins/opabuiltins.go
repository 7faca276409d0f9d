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
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/policy/host"
)

// UserGroups is the name of the group-resolution builtin.
const UserGroups = builtins.UserGroupsName

// decls are the types of aclc's builtins, by name.
var decls = map[string]*types.Function{
	// aclc.user_groups(user) → {"groups": [...]}, with "error" when the lookup failed.
	builtins.UserGroupsName: types.NewFunction(
		types.Args(types.Named("user", types.S).Description("the user name")),
		types.Named("result", types.NewObject(
			[]*types.StaticProperty{types.NewStaticProperty("groups", types.NewArray(nil, types.S))},
			types.NewDynamicProperty(types.S, types.S),
		)).Description(`{"groups": [...]}, with "error" when the lookup failed`),
	),
	admission.DecodeErrorName: types.NewFunction(
		types.Args(types.Named("kind", types.S).Description("the object's kind"), types.Named("object", types.A).Description("the object")),
		types.Named("message", types.S).Description(`the decoder's message, or ""`),
	),
	admission.RegexMatchAnyName: types.NewFunction(
		types.Args(types.Named("patterns", types.NewArray(nil, types.S)).Description("Go regular expressions"), types.Named("s", types.S).Description("the string to search")),
		types.Named("result", types.B).Description("whether any pattern matches s, unanchored"),
	),
	admission.UserInfoErrorName: types.NewFunction(
		types.Args(types.Named("value", types.S).Description("a pre-set user.info annotation")),
		types.Named("message", types.S).Description(`why YuniKorn refuses it, or ""`),
	),
}

// Decls returns the declarations of aclc's builtins, sorted by name.
func Decls() []*ast.Builtin {
	var out []*ast.Builtin
	for _, b := range host.Builtins(nil) {
		out = append(out, &ast.Builtin{
			Name:             b.Name,
			Description:      b.Description,
			Decl:             decls[b.Name],
			Nondeterministic: b.Name == builtins.UserGroupsName,
		})
	}
	return out
}

// Capabilities returns OPA's capabilities for this version plus aclc's
// builtins, for compiling policies that call them.
func Capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = append(caps.Builtins, Decls()...)
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
func Functions(c *builtins.Cache) []func(*rego.Rego) {
	var out []func(*rego.Rego)
	for _, d := range Decls() {
		name := d.Name
		arity := len(decls[name].FuncArgs().Args)
		out = append(out, rego.FunctionDyn(&rego.Function{
			Name: name, Description: d.Description, Decl: decls[name], Nondeterministic: d.Nondeterministic,
		}, func(bctx rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
			return call(bctx.Context, c, name, terms[:min(arity, len(terms))])
		}))
	}
	return out
}

var registerOnce sync.Once

// Register adds aclc's builtins to OPA's global registries, once, for the
// runtimes that resolve builtins only there: OPA's Wasm SDK and OPA's
// server. The implementations hold no cache of their own; each call uses
// the cache of its evaluation's context (WithCache), and fails with
// ErrNoCache without one.
func Register() {
	registerOnce.Do(func() {
		for _, d := range Decls() {
			name := d.Name
			arity := len(decls[name].FuncArgs().Args)
			rego.RegisterBuiltinDyn(&rego.Function{
				Name: name, Description: d.Description, Decl: decls[name], Nondeterministic: d.Nondeterministic,
			}, func(bctx rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
				c := CacheFrom(bctx.Context)
				if c == nil && name == builtins.UserGroupsName {
					return nil, fmt.Errorf("%s: %w", name, ErrNoCache)
				}
				// OPA passes the output variable after the operands.
				return call(bctx.Context, c, name, terms[:min(arity, len(terms))])
			})
		}
	})
}

// Call runs the named builtin on JSON arguments over c.
func Call(c *builtins.Cache, name string, args []json.RawMessage) (json.RawMessage, error) {
	return CallContext(context.Background(), c, name, args)
}

// CallContext is Call under the caller's context: a group lookup stops
// waiting for the directory when ctx is done.
func CallContext(ctx context.Context, c *builtins.Cache, name string, args []json.RawMessage) (json.RawMessage, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	for _, b := range host.Builtins(c) {
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

func call(ctx context.Context, c *builtins.Cache, name string, terms []*ast.Term) (*ast.Term, error) {
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
	out, err := CallContext(ctx, c, name, args)
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
