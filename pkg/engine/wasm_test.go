package engine_test

import (
	"bytes"
	"context"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/wasm"
)

// TestWasmAnswersAsOPAsWasmEngine: on a module that calls OPA's builtins
// on the host and whose values JSON cannot hold as they are, aclc's host
// answers as OPA's own Wasm engine: a set result as its sorted array, a
// set given to a host builtin as a set, one time per evaluation; and a
// number the policy writes .5 as 0.5 (where OPA's engine gives text that
// is not JSON).
func TestWasmAnswersAsOPAsWasmEngine(t *testing.T) {
	const module = `package x

members contains u if some u in input.users

covered := object.subset({"read", "write"}, {u | some u in input.users})

msg := sprintf("%v", [members])

one_time if {
	time.now_ns(a)
	time.now_ns(b)
	a == b
}

ratio := .5
`
	ctx := context.Background()
	eps := []string{"x/members", "x/covered", "x/msg", "x/one_time", "x/ratio"}
	c := compile.New().
		WithTarget(compile.TargetWasm).
		WithEntrypoints(eps...).
		WithFS(fstest.MapFS{"x.rego": {Data: []byte(module)}}).
		WithPaths(".")
	if err := c.Build(ctx); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(*c.Bundle()); err != nil {
		t.Fatal(err)
	}
	host, err := engine.NewWasm(ctx, buf.Bytes(), wasm.NewConfig().WithPoolSize(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close(ctx) })
	opa, err := engine.NewOPAWasm(ctx, c.Bundle(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opa.Close(ctx) })

	input := []byte(`{"users": ["write", "read", "read", "exec"]}`)
	tests := []struct{ rule, entrypoint, want string }{
		{"a set result is its sorted array", "x/members", `["exec","read","write"]`},
		{"a set reaches object.subset as a set", "x/covered", `false`},
		{"sprintf prints a set as a set", "x/msg", `"{\"exec\", \"read\", \"write\"}"`},
		{"time.now_ns answers one time per evaluation", "x/one_time", `true`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, err := host.Eval(ctx, tt.entrypoint, input)
			if err != nil || string(got) != tt.want {
				t.Fatalf("wasm: got %s, %v; want %s", got, err, tt.want)
			}
			want, err := opa.Eval(ctx, tt.entrypoint, input)
			if err != nil || string(want) != tt.want {
				t.Fatalf("opa-wasm: got %s, %v; want %s", want, err, tt.want)
			}
		})
	}
	t.Run("a number written .5 is 0.5", func(t *testing.T) {
		got, err := host.Eval(ctx, "x/ratio", nil)
		if err != nil || string(got) != "0.5" {
			t.Fatalf("got %s, %v; want 0.5", got, err)
		}
	})
}
