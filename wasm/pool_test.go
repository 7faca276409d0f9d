package wasm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/wasm"
)

// slowPolicy has a rule whose cost grows with the square of the
// length of input.xs and a rule
// that answers at once.
const slowPolicy = `package s
slow := count([1 | some x in input.xs; some y in input.xs; x > y; y > x])
fast := input.user
`

// TestPoolFairness: evaluations that take seconds do not make a plain one
// wait for them. With every pooled instance busy on a slow evaluation, a
// plain evaluation is answered on an instance of its own, in milliseconds,
// not when a slow one ends.
func TestPoolFairness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs evaluations of seconds")
	}
	const pool = 2
	p, slow, fast := slowAndFast(t, wasm.NewConfig().WithPoolSize(pool))
	created := wasm.InstancesCreated(p)

	// A slow evaluation runs until its context ends (or for n² steps).
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	slowErrs := make([]error, pool)
	for i := range pool {
		wg.Go(func() { _, slowErrs[i] = slow.Eval(ctx, slowInput) })
	}
	// Let both take their instances.
	time.Sleep(200 * time.Millisecond)

	var worst time.Duration
	for range 20 {
		start := time.Now()
		v, err := fast.Eval(context.Background(), []byte(`{"user":"sue"}`))
		d := time.Since(start)
		if err != nil || string(v) != `"sue"` {
			t.Fatalf("fast beside slow ones: %s, %v", v, err)
		}
		worst = max(worst, d)
	}
	stillSlow := ctx.Err() == nil
	cancel()
	wg.Wait()
	t.Logf("the slowest of 20 plain evaluations beside %d slow ones: %s", pool, worst)
	if !stillSlow {
		t.Fatal("the slow evaluations ended before the plain ones: make them slower")
	}
	for _, err := range slowErrs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("slow evaluation: %v, want cancelled", err)
		}
	}
	// Generous: a plain evaluation takes microseconds; on a shared
	// machine it may wait for the CPU, but not for a slow evaluation.
	if worst > 2*time.Second {
		t.Errorf("a plain evaluation waited %s beside slow ones", worst)
	}
	// The plain evaluations ran on overflow instances, one each, closed
	// afterwards; the pool itself is as it was (the two interrupted
	// instances are replaced).
	if n := wasm.InstancesCreated(p) - created; n < 20 {
		t.Errorf("%d instances made for 20 plain evaluations beside a busy pool, want an overflow instance each", n)
	}
	pages, err := wasm.InstancePages(context.Background(), p)
	if err != nil || len(pages) != pool {
		t.Errorf("pool after overflow: %d instances (%v), want %d", len(pages), err, pool)
	}
}

// TestPoolOverflowBound: with every pooled and overflow instance busy, an
// evaluation waits for one, bounded by its context; WithOverflow(0) is the
// plain pool.
func TestPoolOverflowBound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs evaluations of seconds")
	}
	for _, overflow := range []int{0, 1} {
		t.Run(fmt.Sprintf("overflow %d", overflow), func(t *testing.T) {
			p, slow, fast := slowAndFast(t, wasm.NewConfig().WithPoolSize(1).WithOverflow(overflow))
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 1 + overflow {
				wg.Go(func() { slow.Eval(ctx, slowInput) })
			}
			defer func() { cancel(); wg.Wait() }()
			time.Sleep(200 * time.Millisecond)
			short, stop := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer stop()
			if v, err := fast.Eval(short, []byte(`{"user":"sue"}`)); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("with every instance busy: %s, %v; want the deadline", v, err)
			}
			cancel()
			wg.Wait()
			// Once the slow ones are stopped, evaluations go on.
			if v, err := fast.Eval(context.Background(), []byte(`{"user":"sue"}`)); err != nil || string(v) != `"sue"` {
				t.Errorf("after the slow ones: %s, %v", v, err)
			}
			if err := p.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
}

// slowInput makes s/slow take minutes.
var slowInput = fmt.Appendf(nil, `{"xs":[%s0]}`, strings.Repeat("1,", 20000))

func slowAndFast(t *testing.T, cfg wasm.Config) (p *wasm.Policy, slow, fast wasm.Entrypoint) {
	t.Helper()
	b := buildWasmBundle(t, map[string]string{"p.rego": slowPolicy}, "", "s/slow", "s/fast")
	p = mustLoad(t, b, cfg)
	slow, _ = p.Entrypoint("s/slow")
	fast, _ = p.Entrypoint("s/fast")
	return p, slow, fast
}
