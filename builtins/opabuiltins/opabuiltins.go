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
const UserGroups = "aclc.user_groups"

// userGroupsType is aclc.user_groups(user) → {"groups": [...], "error": "..."};
// "error" is present only when the lookup failed.
var userGroupsType = types.NewFunction(
	types.Args(types.Named("user", types.S).Description("the user name")),
	types.Named("result", types.NewObject(
		[]*types.StaticProperty{types.NewStaticProperty("groups", types.NewArray(nil, types.S))},
		types.NewDynamicProperty(types.S, types.S),
	)).Description(`{"groups": [...]}, with "error" when the lookup failed`),
)

// Decls returns the declarations of aclc's builtins.
func Decls() []*ast.Builtin {
	return []*ast.Builtin{{
		Name:             UserGroups,
		Description:      "Resolves a user's groups with the configured resolver behind YuniKorn's cache.",
		Decl:             userGroupsType,
		Nondeterministic: true,
	}}
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
// OPA's evaluator and OPA's Wasm engine both call them.
func Register() {
	registerOnce.Do(func() {
		d := Decls()[0]
		rego.RegisterBuiltin1(&rego.Function{
			Name: d.Name, Description: d.Description, Decl: userGroupsType, Nondeterministic: true,
		}, func(_ rego.BuiltinContext, user *ast.Term) (*ast.Term, error) {
			name, ok := user.Value.(ast.String)
			if !ok {
				return nil, fmt.Errorf("%s: operand 1 must be string but got %s", UserGroups, ast.ValueName(user.Value))
			}
			arg, _ := json.Marshal(string(name))
			out, err := builtins.UserGroups(Cache()).Func([]json.RawMessage{arg})
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
		})
	})
}
