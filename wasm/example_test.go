package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/aclc-dev/aclc/wasm"
)

// exampleBundle compiles a small policy to an OPA Wasm bundle, as
// `opa build -t wasm -e authz/allow -e authz/reason` would.
func exampleBundle() []byte {
	b, err := compileWasmBundle(map[string]string{"authz.rego": `package authz

default allow := false

allow if {
	some role in data.users[input.user].roles
	data.permissions[role][input.action]
}

reason := concat(" ", [input.user, "may", input.action]) if allow

greeting := aclc.test_echo(input.user)
`}, `{
  "users": {"alice": {"roles": ["admin"]}, "bob": {"roles": ["viewer"]}},
  "permissions": {"admin": {"read": true, "write": true}, "viewer": {"read": true}}
}`, "authz/allow", "authz/reason", "authz/greeting")
	if err != nil {
		log.Fatal(err)
	}
	return b
}

// exampleBuiltins implements the policy's custom builtin.
var exampleBuiltins = map[string]wasm.BuiltinFunc{
	"aclc.test_echo": func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
		var s string
		if err := json.Unmarshal(args[0], &s); err != nil {
			return nil, err // an error makes the call undefined
		}
		return json.Marshal("hello " + s)
	},
}

func ExampleLoad() {
	ctx := context.Background()
	p, err := wasm.Load(ctx, exampleBundle(), wasm.NewConfig().
		WithPoolSize(2).
		WithBuiltins(exampleBuiltins))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	fmt.Println(strings.Join(p.Entrypoints(), ", "))

	allow, err := p.Entrypoint("authz/allow")
	if err != nil {
		log.Fatal(err)
	}
	for _, in := range []string{
		`{"user": "alice", "action": "write"}`,
		`{"user": "bob", "action": "write"}`,
	} {
		v, err := allow.Eval(ctx, []byte(in))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(v))
	}
	// Output:
	// authz/allow, authz/greeting, authz/reason
	// true
	// false
}

func ExamplePolicy_Eval() {
	ctx := context.Background()
	p, err := wasm.Load(ctx, exampleBundle(), wasm.NewConfig().WithBuiltins(exampleBuiltins))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)

	v, err := p.Eval(ctx, "authz/reason", []byte(`{"user": "alice", "action": "read"}`))
	fmt.Println(string(v), err)

	_, err = p.Eval(ctx, "authz/reason", []byte(`{"user": "bob", "action": "write"}`))
	fmt.Println(errors.Is(err, wasm.ErrUndefined))

	v, err = p.Eval(ctx, "authz/greeting", []byte(`{"user": "carol"}`))
	fmt.Println(string(v), err)
	// Output:
	// "alice may read" <nil>
	// true
	// "hello carol" <nil>
}
