// Package opabuiltins registers aclc's custom builtins with OPA: their type
// declarations for the compiler (and for `opa build --capabilities`), and
// their implementations for OPA's evaluator and OPA's Wasm engine.
//
// # Notes
//
// OPA resolves builtins from process-wide registries, so the group cache the
// implementations read is process-wide too: SetCache replaces it.
package opabuiltins

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/builtins"
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
	builtins.DecodeErrorName: types.NewFunction(
		types.Args(types.Named("kind", types.S).Description("the object's kind"), types.Named("object", types.A).Description("the object")),
		types.Named("message", types.S).Description(`the decoder's message, or ""`),
	),
	builtins.RegexMatchAnyName: types.NewFunction(
		types.Args(types.Named("patterns", types.NewArray(nil, types.S)).Description("Go regular expressions"), types.Named("s", types.S).Description("the string to search")),
		types.Named("result", types.B).Description("whether any pattern matches s, unanchored"),
	),
	builtins.UserInfoErrorName: types.NewFunction(
		types.Args(types.Named("value", types.S).Description("a pre-set user.info annotation")),
		types.Named("message", types.S).Description(`why YuniKorn refuses it, or ""`),
	),
}

// Decls returns the declarations of aclc's builtins, sorted by name.
func Decls() []*ast.Builtin {
	var out []*ast.Builtin
	for _, b := range builtins.All(nil) {
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

var cache atomic.Pointer[builtins.Cache]

// SetCache makes c the cache every registered builtin reads.
func SetCache(c *builtins.Cache) { cache.Store(c) }

// Cache returns the current cache, creating a none-resolver cache on first
// use.
func Cache() *builtins.Cache {
	if c := cache.Load(); c != nil {
		return c
	}
	cache.CompareAndSwap(nil, builtins.NewCache(builtins.NoResolver{}, builtins.SystemClock{}))
	return cache.Load()
}

var registerOnce sync.Once

// Register adds aclc's builtins to OPA's global registries, once. After it,
// OPA's evaluator and OPA's Wasm engine both call them; each call goes
// through the builtin's JSON-level implementation with the current cache.
func Register() {
	registerOnce.Do(func() {
		for _, d := range Decls() {
			name := d.Name
			arity := len(decls[name].FuncArgs().Args)
			rego.RegisterBuiltinDyn(&rego.Function{
				Name: name, Description: d.Description, Decl: decls[name], Nondeterministic: d.Nondeterministic,
			}, func(_ rego.BuiltinContext, terms []*ast.Term) (*ast.Term, error) {
				// OPA passes the output variable after the operands.
				return call(name, terms[:min(arity, len(terms))])
			})
		}
	})
}

// Call runs the named builtin on JSON arguments with the current cache.
func Call(name string, args []json.RawMessage) (json.RawMessage, error) {
	for _, b := range builtins.All(Cache()) {
		if b.Name == name {
			return b.Func(args)
		}
	}
	return nil, fmt.Errorf("unknown builtin %s", name)
}

func call(name string, terms []*ast.Term) (*ast.Term, error) {
	args := make([]json.RawMessage, len(terms))
	for i, t := range terms {
		v, err := ast.JSON(t.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: operand %d: %w", name, i+1, err)
		}
		if args[i], err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	out, err := Call(name, args)
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
