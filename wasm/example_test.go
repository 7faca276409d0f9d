package wasm_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/wasm"
)

// The bundles the examples read are built by aclc build from the YuniKorn
// ACL documentation's example; TestExampleBundlesAreCurrent keeps them in
// step with the policy. The sets bundle is built by stock opa at the
// version go.mod requires (go run at an explicit version needs no go.sum
// entries for opa's command-line packages).
//go:generate go run ../cmd/aclc build --target wasm --output-file testdata/queues-wasm.tar.gz ../examples/yunikorn/acl-doc.yaml
//go:generate go run ../cmd/aclc build --host-builtins --resolver test --target wasm --output-file testdata/queues-host-wasm.tar.gz ../examples/yunikorn/acl-doc.yaml
//go:generate go run github.com/open-policy-agent/opa@v1.22.0 build -t wasm -e sets/members -e sets/ratio -e sets/covered -o testdata/sets-wasm.tar.gz testdata/sets.rego

// A bundle aclc build writes by default calls no aclc builtin: the
// default Config, which supplies none, runs it.
func ExampleLoadFile() {
	ctx := context.Background()
	// aclc build --target wasm --output-file testdata/queues-wasm.tar.gz examples/yunikorn/acl-doc.yaml
	p, err := wasm.LoadFile(ctx, "testdata/queues-wasm.tar.gz", wasm.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	ep, err := p.Entrypoint("yunikorn/queues/decision")
	if err != nil {
		log.Fatal(err)
	}
	out, err := ep.Eval(ctx, []byte(`{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"allow":true,"reason":"adminacl of root.test allows group \"dev\""}
}

// Load takes the bundle's bytes; the Config's With methods return copies.
func ExampleLoad() {
	ctx := context.Background()
	raw, err := os.ReadFile("testdata/queues-wasm.tar.gz")
	if err != nil {
		log.Fatal(err)
	}
	p, err := wasm.Load(ctx, raw, wasm.NewConfig().WithPoolSize(2))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	for _, name := range p.Entrypoints() {
		fmt.Println(name)
	}
	// Output:
	// yunikorn/admission/guard
	// yunikorn/admission/queue
	// yunikorn/admission/review
	// yunikorn/queues/decision
	// yunikorn/queues/placement
}

// Policy.Eval names the entry point on each call.
func ExamplePolicy_Eval() {
	ctx := context.Background()
	p, err := wasm.LoadFile(ctx, "testdata/queues-wasm.tar.gz", wasm.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	out, err := p.Eval(ctx, "yunikorn/queues/decision", []byte(`{"queue":"root.product","action":"submit","user":"bob","groups":["test"]}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"allow":false,"reason":"no submitacl or adminacl on root.product or its ancestors allows user \"bob\" with groups [test]"}
}

// A bundle built with --host-builtins calls aclc's builtins: group
// resolution at decision time (aclc.user_groups, for the os and ldap
// resolvers) and the Kubernetes decoding of admitted objects. They are
// plain Go in package builtins; engine.WasmBuiltins gives them to the host,
// keyed by name, over a group cache that holds the resolver and YuniKorn's
// cache lifetimes. Without them Load refuses the bundle and names each one.
func ExampleConfig_WithBuiltins() {
	ctx := context.Background()
	// aclc build --host-builtins --resolver test --target wasm --output-file testdata/queues-host-wasm.tar.gz examples/yunikorn/acl-doc.yaml
	const bundle = "testdata/queues-host-wasm.tar.gz"
	if _, err := wasm.LoadFile(ctx, bundle, wasm.NewConfig()); err != nil {
		fmt.Println(err)
	}

	resolver, err := builtins.NewResolver("test") // YuniKorn's test table; "os", "file=PATH", "ldap=DIR"
	if err != nil {
		log.Fatal(err)
	}
	groups := builtins.NewCache(resolver, nil)
	p, err := wasm.LoadFile(ctx, bundle, wasm.NewConfig().WithBuiltins(engine.WasmBuiltins(groups)))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	// No groups in the input: the policy asks aclc.user_groups.
	out, err := p.Eval(ctx, "yunikorn/queues/decision", []byte(`{"queue":"root.test","action":"admin","user":"testuser1"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// wasm: builtin "aclc.k8s_decode_error" not found; builtin "aclc.regex_match_any" not found; builtin "aclc.user_groups" not found; builtin "aclc.user_info_error" not found (testdata/queues-host-wasm.tar.gz)
	// {"allow":false,"reason":"no adminacl on root.test or its ancestors allows user \"testuser1\" with groups [group1000, group1001]"}
}

// Eval gives JSON, in which a set is the array of its elements in OPA's
// order and a number is a JSON number; EvalValue gives Rego text, in which
// a set is a set, and takes it too: here the input's users are a set.
func ExampleEntrypoint_EvalValue() {
	ctx := context.Background()
	// opa build -t wasm -e sets/members -e sets/ratio -e sets/covered -o testdata/sets-wasm.tar.gz testdata/sets.rego
	p, err := wasm.LoadFile(ctx, "testdata/sets-wasm.tar.gz", wasm.NewConfig().
		WithValueBuiltins(map[string]wasm.ValueBuiltinFunc{"object.subset": subset}))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	members, err := p.Entrypoint("sets/members")
	if err != nil {
		log.Fatal(err)
	}
	out, err := members.Eval(ctx, []byte(`{"users": ["sue", "bob"], "admins": ["ann"]}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	out, err = members.EvalValue(ctx, []byte(`{"users": {"sue", "bob"}, "admins": {"ann"}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	out, err = p.Eval(ctx, "sets/ratio", nil) // ratio := .5
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// ["ann","bob","sue"]
	// {"ann", "bob", "sue"}
	// 0.5
}

// A ValueBuiltinFunc sees sets as sets, sorted, and may return one; a
// BuiltinFunc would see JSON arrays. This object.subset answers for sets
// of strings only, to show what it receives; a Go program that has OPA
// would parse the arguments with ast.ParseTerm and call OPA's own.
func ExampleConfig_WithValueBuiltins() {
	ctx := context.Background()
	p, err := wasm.LoadFile(ctx, "testdata/sets-wasm.tar.gz", wasm.NewConfig().
		WithValueBuiltins(map[string]wasm.ValueBuiltinFunc{"object.subset": func(ctx context.Context, args [][]byte) ([]byte, error) {
			fmt.Printf("object.subset(%s, %s)\n", args[0], args[1])
			return subset(ctx, args)
		}}))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	out, err := p.EvalValue(ctx, "sets/covered", []byte(`{"granted": {"write", "read"}, "wanted": {"read"}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// object.subset({"read", "write"}, {"read"})
	// true
}

// subset is object.subset for two sets of plain strings (no escapes):
// whether every element of the second is in the first.
func subset(_ context.Context, args [][]byte) ([]byte, error) {
	elems := func(set []byte) (map[string]bool, error) {
		s := string(set)
		if s == "set()" {
			return nil, nil
		}
		if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
			return nil, fmt.Errorf("not a set: %s", s)
		}
		m := map[string]bool{}
		for _, e := range strings.Split(s[1:len(s)-1], ", ") {
			m[e] = true
		}
		return m, nil
	}
	super, err := elems(args[0])
	if err != nil {
		return nil, err
	}
	sub, err := elems(args[1])
	if err != nil {
		return nil, err
	}
	for e := range sub {
		if !super[e] {
			return []byte("false"), nil
		}
	}
	return []byte("true"), nil
}
