package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	_ "github.com/open-policy-agent/opa/v1/features/wasm" // OPA's Wasm engine, for BenchmarkOPA
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

const benchPolicy = `package authz

default allow := false

allow if {
	some role in data.users[input.user].roles
	data.permissions[role][input.action]
}
`

const benchData = `{
  "users": {"alice": {"roles": ["admin"]}, "bob": {"roles": ["viewer"]}},
  "permissions": {"admin": {"read": true, "write": true}, "viewer": {"read": true}}
}`

func loadBenchPolicy(b *testing.B, cfg wasm.Config) (*wasm.Policy, wasm.Entrypoint) {
	b.Helper()
	bundle := buildWasmBundle(b, map[string]string{"authz.rego": benchPolicy}, benchData, "authz/allow")
	p, err := wasm.Load(context.Background(), bundle, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(context.Background()) })
	ep, err := p.Entrypoint("authz/allow")
	if err != nil {
		b.Fatal(err)
	}
	return p, ep
}

// BenchmarkEval measures one sequential decision of a small data-lookup
// policy.
func BenchmarkEval(b *testing.B) {
	_, ep := loadBenchPolicy(b, wasm.NewConfig())
	ctx := context.Background()
	input := []byte(`{"user":"alice","action":"write"}`)
	b.ReportAllocs()
	for b.Loop() {
		v, err := ep.Eval(ctx, input)
		if err != nil || string(v) != "true" {
			b.Fatalf("got %s, %v", v, err)
		}
	}
}

// BenchmarkEvalParallel measures decisions from GOMAXPROCS goroutines.
func BenchmarkEvalParallel(b *testing.B) {
	_, ep := loadBenchPolicy(b, wasm.NewConfig())
	ctx := context.Background()
	inputs := [][]byte{
		[]byte(`{"user":"alice","action":"write"}`),
		[]byte(`{"user":"bob","action":"write"}`),
	}
	want := []string{"true", "false"}
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(n.Add(1))
		for pb.Next() {
			i++
			v, err := ep.Eval(ctx, inputs[i%2])
			if err != nil || string(v) != want[i%2] {
				panic(fmt.Sprintf("got %s, %v", v, err))
			}
		}
	})
}

// BenchmarkOPA evaluates the same decision with OPA's own engines for
// comparison: topdown (a prepared query) and OPA's Wasm engine
// (rego.Target("wasm"), also on wazero).
func BenchmarkOPA(b *testing.B) {
	var data map[string]any
	if err := json.Unmarshal([]byte(benchData), &data); err != nil {
		b.Fatal(err)
	}
	input := map[string]any{"user": "alice", "action": "write"}
	for _, target := range []string{"rego", "wasm"} {
		b.Run(target, func(b *testing.B) {
			ctx := context.Background()
			pq, err := rego.New(
				rego.Query("data.authz.allow"),
				rego.Module("authz.rego", benchPolicy),
				rego.Store(inmem.NewFromObject(data)),
				rego.Target(target),
			).PrepareForEval(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				rs, err := pq.Eval(ctx, rego.EvalInput(input))
				if err != nil || len(rs) != 1 || rs[0].Expressions[0].Value != true {
					b.Fatalf("got %v, %v", rs, err)
				}
			}
		})
	}
}

// BenchmarkSeedQueue measures the queue decision of the seed configuration
// (examples/yunikorn/acl-doc.yaml, john in dev administers root.test), the
// decision tests/bench reports as "seed", on this host with aclc's
// builtins.
func BenchmarkSeedQueue(b *testing.B) {
	benchSeedQueue(b, wasm.NewConfig())
}

// BenchmarkMemoRewrite compares, in one process, decisions with the
// memoization rewrite of internal/memo and with the module's own
// memoization; the pairs of one run share the machine's conditions.
func BenchmarkMemoRewrite(b *testing.B) {
	variants := []struct {
		name string
		cfg  wasm.Config
	}{
		{"rewritten", wasm.NewConfig()},
		{"as-compiled", wasm.WithoutMemoRewrite(wasm.NewConfig())},
	}
	for _, v := range variants {
		b.Run("seed/"+v.name, func(b *testing.B) { benchSeedQueue(b, v.cfg) })
	}
	for _, v := range variants {
		b.Run("authz/"+v.name, func(b *testing.B) {
			_, ep := loadBenchPolicy(b, v.cfg)
			benchDecision(b, ep, []byte(`{"user":"alice","action":"write"}`), "true")
		})
	}
}

func benchSeedQueue(b *testing.B, cfg wasm.Config) {
	ctx := context.Background()
	s, err := translate.LoadSources([]string{"../examples/yunikorn/acl-doc.yaml"}, translate.KindAuto)
	if err != nil {
		b.Fatal(err)
	}
	wb, err := translate.WasmBundle(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := translate.BundleBytes(wb)
	if err != nil {
		b.Fatal(err)
	}
	p, err := wasm.Load(ctx, raw, cfg.WithBuiltins(engine.WasmBuiltins(builtins.NewCache(builtins.NoResolver{}, builtins.SystemClock{}))))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(ctx) })
	ep, err := p.Entrypoint(translate.EntrypointYuniKornQueues)
	if err != nil {
		b.Fatal(err)
	}
	input := []byte(`{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`)
	want, err := ep.Eval(ctx, input)
	if err != nil {
		b.Fatal(err)
	}
	benchDecision(b, ep, input, string(want))
}

func benchDecision(b *testing.B, ep wasm.Entrypoint, input []byte, want string) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, err := ep.Eval(ctx, input)
		if err != nil || string(v) != want {
			b.Fatalf("got %s, %v; want %s", v, err, want)
		}
	}
}
