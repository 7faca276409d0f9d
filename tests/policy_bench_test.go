package tests

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
	"github.com/aclc-dev/aclc/wasm"
)

// benchCase is one decision timed by benchmarkInterleaved.
type benchCase struct {
	name  string // reported as <name>-ns/op
	p     *wasm.Policy
	ep    string
	input []byte
	spent time.Duration
}

// benchmarkInterleaved evaluates the cases in turns of a few decisions each, so that
// the load of a shared machine falls on all of them alike, and reports each one's time
// per decision: only ratios between cases of one run mean much there.
func benchmarkInterleaved(ctx context.Context, b *testing.B, cases []*benchCase) map[string]float64 {
	const turn = 32
	n := 0
	for b.Loop() {
		for _, c := range cases {
			start := time.Now()
			for range turn {
				if _, err := c.p.Eval(ctx, c.ep, c.input); err != nil {
					b.Fatal(err)
				}
			}
			c.spent += time.Since(start)
		}
		n += turn
	}
	out := map[string]float64{}
	for _, c := range cases {
		out[c.name] = float64(c.spent.Nanoseconds()) / float64(n)
		b.ReportMetric(out[c.name], c.name+"-ns/op")
	}
	return out
}

// loadBenchDifferential builds a configuration's policies, reference and current, on
// the wasm host, with the resolver the configuration chooses.
func loadBenchDifferential(ctx context.Context, b *testing.B, name string, src []byte) differential {
	s := &translate.Sources{}
	if err := AddTo(s, Single(name, src)); err != nil {
		b.Fatal(err)
	}
	s, err := s.WithGroupResolution("", false)
	if err != nil {
		b.Fatal(err)
	}
	d := compilePolicyPair(ctx, b, s).load(ctx, b, s.Data())
	b.Cleanup(func() { d.close(context.Background()) })
	return d
}

// BenchmarkPolicyQueueDecision measures the queue decision on the wasm host with the
// reference policy (testdata/policy-before) and the current one: the seed configuration
// (examples/yunikorn/acl-doc.yaml, a user in dev administers root.test) with a 4- and a
// 48-character user name, and 100,000 generated queues (the deepest queue's user
// submits there). It reports each case's time and the ratios the targets are stated in.
func BenchmarkPolicyQueueDecision(b *testing.B) {
	ctx := context.Background()
	seedSrc, err := os.ReadFile("../examples/yunikorn/acl-doc.yaml")
	if err != nil {
		b.Fatal(err)
	}
	lc := gen.Large(100000, 10, 1000000)
	seed := loadBenchDifferential(ctx, b, "seed.yaml", seedSrc)
	large := loadBenchDifferential(ctx, b, "large.yaml", lc.YAML)
	ep := translate.EntrypointYuniKornQueues
	user4 := []byte(`{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`)
	user48 := []byte(`{"queue":"root.test","action":"admin","user":"system:serviceaccount:kube-system:job-controller","groups":["dev"]}`)
	deep := []byte(fmt.Sprintf(`{"queue":%q,"action":"submit","user":%q,"groups":["nobody-listed","other"]}`, lc.DeepQueue, lc.DeepUser))
	var cases []*benchCase
	for _, side := range []string{"before", "after"} {
		pick := func(d differential) *wasm.Policy {
			if side == "before" {
				return d.before
			}
			return d.after
		}
		cases = append(cases,
			&benchCase{name: side + "-seed4", p: pick(seed), ep: ep, input: user4},
			&benchCase{name: side + "-seed48", p: pick(seed), ep: ep, input: user48},
			&benchCase{name: side + "-large", p: pick(large), ep: ep, input: deep})
	}
	seed.same(ctx, b, ep, user4, func() string { return "seed" })
	seed.same(ctx, b, ep, user48, func() string { return "seed" })
	large.same(ctx, b, ep, deep, func() string { return "large" })
	t := benchmarkInterleaved(ctx, b, cases)
	for _, side := range []string{"before", "after"} {
		b.ReportMetric(t[side+"-seed48"]/t[side+"-seed4"], side+"-48/4")
		b.ReportMetric(t[side+"-large"]/t[side+"-seed4"], side+"-large/seed")
	}
	b.ReportMetric(t["after-seed4"]/t["before-seed4"], "after/before-seed4")
}

// floorPolicy loads, on the wasm host, a module whose entry point is the constant
// x := 1: what one opa_eval costs with no policy to speak of.
func floorPolicy(ctx context.Context, b *testing.B) *wasm.Policy {
	m, err := ast.ParseModuleWithOpts("floor.rego", "package floor\n\nx := 1\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		b.Fatal(err)
	}
	bu := &bundle.Bundle{Data: map[string]any{}, Modules: []bundle.ModuleFile{{URL: "/floor.rego", Path: "/floor.rego", Raw: []byte("package floor\n\nx := 1\n"), Parsed: m}}}
	c := compile.New().WithTarget(compile.TargetWasm).WithEntrypoints("floor/x").WithBundle(bu).WithRegoVersion(ast.RegoV1)
	if err := c.Build(ctx); err != nil {
		b.Fatal(err)
	}
	raw, err := translate.BundleBytes(c.Bundle())
	if err != nil {
		b.Fatal(err)
	}
	p, err := wasm.Load(ctx, raw, wasm.NewConfig().WithPoolSize(1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// BenchmarkPolicyVOVDecision measures the VOV decision on the wasm host with the
// reference policy and the current one (examples/vov/acls.yaml with its security.tcl:
// pat, LEADER from elko, may CHOWN job 00123456), and the floor of a constant policy
// with the same input. It reports each one's time and the ratios to the floor.
func BenchmarkPolicyVOVDecision(b *testing.B) {
	ctx := context.Background()
	src, err := os.ReadFile("../examples/vov/acls.yaml")
	if err != nil {
		b.Fatal(err)
	}
	d := loadBenchDifferential(ctx, b, "../examples/vov/acls.yaml", src)
	ep := translate.EntrypointVOV
	in := []byte(`{"object":"00123456","action":"CHOWN","user":"pat","host":"elko"}`)
	d.same(ctx, b, ep, in, func() string { return "vov" })
	cases := []*benchCase{
		{name: "before", p: d.before, ep: ep, input: in},
		{name: "after", p: d.after, ep: ep, input: in},
		{name: "floor", p: floorPolicy(ctx, b), ep: "floor/x", input: in},
	}
	t := benchmarkInterleaved(ctx, b, cases)
	b.ReportMetric(t["before"]/t["floor"], "before/floor")
	b.ReportMetric(t["after"]/t["floor"], "after/floor")
}
