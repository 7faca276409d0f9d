package tests

import (
	"context"
	"sync"
	"testing"
)

// TestConcurrentEnginesAgree decides the corpus cases of one source from
// many goroutines at once on every engine (run with -race in make test):
// pooled Wasm instances and prepared queries must give each caller the
// native answer.
func TestConcurrentEnginesAgree(t *testing.T) {
	ctx := context.Background()
	files, err := Load("..", "corpus")
	if err != nil {
		t.Fatal(err)
	}
	var cases []*Case
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.SourceName == "examples/yunikorn/org.yaml" && c.WantError == "" {
				cases = append(cases, c)
			}
		}
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases on examples/yunikorn/org.yaml", len(cases))
	}
	set, err := NewEngineSet(ctx, cases[0].Inputs, cases[0].Resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(ctx)
	want := make([][]byte, len(cases))
	inputs := make([][]byte, len(cases))
	for i, c := range cases {
		if inputs[i], err = c.InputJSON(); err != nil {
			t.Fatal(err)
		}
		if want[i], err = set.Engines[0].Eval(ctx, c.Entrypoint, inputs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range set.Engines {
		t.Run(e.Name(), func(t *testing.T) {
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for k := 0; k < 200; k++ {
						i := (g*31 + k) % len(cases)
						got, err := e.Eval(ctx, cases[i].Entrypoint, inputs[i])
						if err != nil || !SameJSON(got, want[i]) {
							t.Errorf("%s: got %s, %v; want %s", cases[i].Note, got, err, want[i])
							return
						}
					}
				}(g)
			}
			wg.Wait()
		})
	}
}
