package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Every in-process engine Open opens answers a decision of the sources,
// the same way, and names itself as --engine does.
func TestOpenOpensEveryInProcessEngine(t *testing.T) {
	ctx := context.Background()
	s, err := translate.LoadSources([]string{"../../examples/yunikorn/acl-doc.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", false); err != nil {
		t.Fatal(err)
	}
	in := []byte(`{"queue":"root.test","action":"submit","user":"sue"}`)
	var want string
	for _, name := range engine.InProcess() {
		e, err := engine.Open(ctx, name, engine.Target{Sources: s})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.Name() != name {
			t.Errorf("engine %s calls itself %s", name, e.Name())
		}
		out, err := e.Eval(ctx, translate.EntrypointYuniKornQueues, in)
		e.Close(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want == "" {
			want = string(out)
		} else if string(out) != want {
			t.Errorf("%s: %s, native: %s", name, out, want)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	rb, err := translate.RegoBundle(&translate.Sources{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, engine string
		target       engine.Target
		want         error
	}{
		{"an engine no one knows", "lua", engine.Target{}, engine.ErrUnknownEngine},
		{"a wasm engine on a bundle without policy.wasm", engine.Wasm, engine.Target{Bundle: rb}, engine.ErrNoPolicyWasm},
		{"opa's wasm engine on a bundle without policy.wasm", engine.OPAWasm, engine.Target{Bundle: rb}, engine.ErrNoPolicyWasm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := engine.Open(ctx, tc.engine, tc.target); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := engine.Open(ctx, engine.Native, engine.Target{Bundle: rb}); err == nil {
		t.Error("the native engine opened on a bundle")
	}
}
