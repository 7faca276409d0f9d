package wasm_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/wasm"
)

// The bundles the examples read are built by aclc build from the YuniKorn
// ACL documentation's example; TestExampleBundlesAreCurrent keeps them in
// step with the policy.
//go:generate go run ../cmd/aclc build --target wasm -o testdata/queues-wasm.tar.gz ../examples/yunikorn/acl-doc.yaml
//go:generate go run ../cmd/aclc build --host-builtins --resolver test --target wasm -o testdata/queues-host-wasm.tar.gz ../examples/yunikorn/acl-doc.yaml

// A bundle aclc build writes by default calls no aclc builtin: the
// default Config, which supplies none, runs it.
func ExampleLoadFile() {
	ctx := context.Background()
	// aclc build --target wasm -o testdata/queues-wasm.tar.gz examples/yunikorn/acl-doc.yaml
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
	// aclc build --host-builtins --resolver test --target wasm -o testdata/queues-host-wasm.tar.gz examples/yunikorn/acl-doc.yaml
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
