package wasm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aclc-dev/aclc/wasm"
)

// TestConcurrentEval runs 8 goroutines × 2000 evaluations with distinct
// inputs (run it with -race) and checks every answer.
func TestConcurrentEval(t *testing.T) {
	b := buildWasmBundle(t, map[string]string{"p.rego": `package c
out := concat(":", [input.user, format_int(input.n + 1, 10), data.suffix])
echoed := aclc.test_echo(input.user)
`}, `{"suffix":"sfx"}`, "c/out", "c/echoed")
	p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(4).
		WithBuiltins(map[string]wasm.BuiltinFunc{"aclc.test_echo": echo}))
	out, err := p.Entrypoint("c/out")
	if err != nil {
		t.Fatal(err)
	}
	echoed, err := p.Entrypoint("c/echoed")
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, evals = 8, 2000
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			ctx := context.Background()
			for i := range evals {
				in := fmt.Appendf(nil, `{"user":"u%d","n":%d}`, g, i)
				v, err := out.Eval(ctx, in)
				if want := fmt.Sprintf(`"u%d:%d:sfx"`, g, i+1); err != nil || string(v) != want {
					errs <- fmt.Errorf("goroutine %d eval %d: got %s, %v; want %s", g, i, v, err, want)
					return
				}
				if i%10 == 0 {
					v, err := echoed.Eval(ctx, in)
					if want := fmt.Sprintf(`"echo:u%d"`, g); err != nil || string(v) != want {
						errs <- fmt.Errorf("goroutine %d eval %d: got %s, %v; want %s", g, i, v, err, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
