package adversarial

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// guestWork counts what the policy does for one decision on the wasm
// engine: calls of its own functions and bytes it allocates (opa_malloc).
// Both are deterministic, where time is not: a quadratic loop shows as
// quadratic calls, a quadratic copy as quadratic bytes.
type guestWork struct {
	calls, allocated int64
}

type workCounter struct{ w *guestWork }

func (c workCounter) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	name := def.Name()
	if ex := def.ExportNames(); name == "" && len(ex) > 0 {
		name = ex[0]
	}
	return workListener{c.w, name == "opa_malloc"}
}

type workListener struct {
	w      *guestWork
	malloc bool
}

func (l workListener) Before(_ context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	l.w.calls++
	if l.malloc && len(params) > 0 {
		l.w.allocated += int64(uint32(params[0]))
	}
}

func (workListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (workListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// countingEngine is the wasm engine over a cost source, with its counter;
// one per source, opened when first needed, one evaluation at a time.
type countingEngine struct {
	once sync.Once
	mu   sync.Mutex
	e    engine.Engine
	work guestWork
	// plain is the same engine without the listener, for timing.
	plain engine.Engine
	err   error
}

var countingEngines sync.Map // source file → *countingEngine

func openCounting(file string) *countingEngine {
	v, _ := countingEngines.LoadOrStore(file, &countingEngine{})
	ce := v.(*countingEngine)
	ce.once.Do(func() {
		ctx := context.Background()
		src, err := os.ReadFile(file)
		if err != nil {
			ce.err = err
			return
		}
		s := &translate.Sources{}
		if ce.err = s.Add(file, src, translate.KindAuto); ce.err != nil {
			return
		}
		if s, ce.err = s.WithGroupResolution("", false); ce.err != nil {
			return
		}
		wb, err := translate.WasmBundle(ctx, s)
		if err != nil {
			ce.err = err
			return
		}
		raw, err := translate.BundleBytes(wb)
		if err != nil {
			ce.err = err
			return
		}
		cfg := wasm.NewConfig().WithPoolSize(1)
		if ce.plain, ce.err = engine.NewWasm(ctx, raw, cfg, engine.NewGroupCache(s.Groups())); ce.err != nil {
			return
		}
		ce.e, ce.err = engine.NewWasm(ctx, raw, cfg.WithFunctionListener(workCounter{&ce.work}), engine.NewGroupCache(s.Groups()))
	})
	return ce
}

// decide counts the guest's work for one decision, and times the same
// decision without the listener (the fastest of three runs).
func (ce *countingEngine) decide(ep string, input []byte) (guestWork, time.Duration, error) {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	// Counted on the second run: the first on a fresh instance also
	// counts what the instance sets up once.
	for range 2 {
		ce.work = guestWork{}
		if _, err := ce.e.Eval(context.Background(), ep, input); err != nil {
			return ce.work, 0, err
		}
	}
	best := time.Duration(math.MaxInt64)
	for range 3 {
		runtime.GC()
		t0 := time.Now()
		if _, err := ce.plain.Eval(context.Background(), ep, input); err != nil {
			return ce.work, 0, err
		}
		best = min(best, time.Since(t0))
	}
	return ce.work, best, nil
}

// FuzzCostIsLinear grows one worst-case input (CostInputs, chosen by the
// fuzzer) along its dimension, k, 4k and 16k, and checks on the wasm engine
// that the guest's calls and allocated bytes grow linearly: going from 4k
// to 16k adds at most twice the fourfold of what going from k to 4k added
// (a linear cost adds four times as much, a quadratic one sixteen times;
// the slack is for buffers that grow by doubling). Counting, not timing,
// makes it deterministic. Costs that do not show in counts (a host
// function) show in the times logged beside them, and in the growth
// factors make reliability prints for every engine; they are not asserted
// here, where the rest of make test shares the machine. An evaluation that
// fails (out of memory) fails the property too: the API server sends
// inputs far larger than these.
func FuzzCostIsLinear(f *testing.F) {
	// TestMain runs the package from the repository root; the fuzzer keeps
	// its corpus in the package's testdata, relative to the directory it
	// runs in.
	root, err := os.Getwd()
	if err != nil {
		f.Fatal(err)
	}
	if err := os.Chdir(filepath.Join(root, "tests", "adversarial")); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = os.Chdir(root) })
	inputs := CostInputs()
	for i := range inputs {
		f.Add(uint8(i), uint16(511))
	}
	f.Fuzz(func(t *testing.T, which uint8, n uint16) {
		in := inputs[int(which)%len(inputs)]
		k := 32 + int(n)%512
		ce := openCounting(filepath.Join(root, costSources[in.Entrypoint]))
		if ce.err != nil {
			t.Fatal(ce.err)
		}
		var w [3]guestWork
		var took [3]time.Duration
		for i, size := range []int{k, 4 * k, 16 * k} {
			got, d, err := ce.decide(in.Entrypoint, in.Make(size))
			if err != nil {
				t.Fatalf("%s at %d %s: %v", in.Name, size, in.Unit, err)
			}
			w[i], took[i] = got, d
		}
		t.Logf("%s at %d, %d, %d %s: guest calls %d, %d, %d; allocated %d, %d, %d bytes; %s, %s, %s",
			in.Name, k, 4*k, 16*k, in.Unit, w[0].calls, w[1].calls, w[2].calls, w[0].allocated, w[1].allocated, w[2].allocated, dur(took[0]), dur(took[1]), dur(took[2]))
		check := func(what string, a, b, c int64) {
			first, second := max(b-a, 0), c-b
			// And a little more: keys and numbers get a character
			// longer, and a buffer that doubles can double once more
			// in the second step than in the first, a step linear in
			// what the second step adds (16 per unit). A quadratic
			// cost outgrows that slack from the smallest sizes on.
			if second > first*8+1024+16*int64(12*k) {
				t.Errorf("%s: %s super-linear: %d, %d, %d at %d, %d, %d %s (from 4k to 16k adds %.1f× what k to 4k added; linear is 4×)",
					in.Name, what, a, b, c, k, 4*k, 16*k, in.Unit, float64(second)/float64(max(first, 1)))
			}
		}
		check("guest calls", w[0].calls, w[1].calls, w[2].calls)
		check("allocated bytes", w[0].allocated, w[1].allocated, w[2].allocated)
	})
}
