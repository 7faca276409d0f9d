package interrupt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/aclc-dev/aclc/wasm/internal/interrupt"
)

func section(id byte, content ...byte) []byte {
	return append([]byte{id, byte(len(content))}, content...)
}

func module(sections ...[]byte) []byte {
	m := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	for _, s := range sections {
		m = append(m, s...)
	}
	return m
}

// testModule imports env.yield (i32, i32) -> i32 and exports
//
//	spin: (loop (br 0))
//	sum(n): a loop adding n + (n-1) + ... + 1
//
// and, when withGlobal, an immutable global g = 42 (so that a global
// section already exists).
func testModule(withGlobal bool) []byte {
	typ := section(1, 0x03,
		0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f,
		0x60, 0x00, 0x00,
		0x60, 0x01, 0x7f, 0x01, 0x7f)
	imp := section(2, 0x01, 0x03, 'e', 'n', 'v', 0x05, 'y', 'i', 'e', 'l', 'd', 0x00, 0x00)
	fn := section(3, 0x02, 0x01, 0x02)
	spin := []byte{0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b}
	sumBody := []byte{0x01, 0x01, 0x7f,
		0x02, 0x40, 0x03, 0x40,
		0x20, 0x00, 0x45, 0x0d, 0x01,
		0x20, 0x01, 0x20, 0x00, 0x6a, 0x21, 0x01,
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00,
		0x0c, 0x00, 0x0b, 0x0b,
		0x20, 0x01, 0x0b}
	code := []byte{0x02}
	code = append(code, spin...)
	code = append(code, byte(len(sumBody)))
	code = append(code, sumBody...)
	codeSec := section(10, code...)
	exports := []byte{0x02, 0x04, 's', 'p', 'i', 'n', 0x00, 0x01, 0x03, 's', 'u', 'm', 0x00, 0x02}
	if !withGlobal {
		return module(typ, imp, fn, section(7, exports...), codeSec)
	}
	exports[0] = 0x03
	exports = append(exports, 0x01, 'g', 0x03, 0x00)
	glob := section(6, 0x01, 0x7f, 0x00, 0x41, 0x2a, 0x0b)
	return module(typ, imp, fn, glob, section(7, exports...), codeSec)
}

var errStop = errors.New("stop")

func TestInstrument(t *testing.T) {
	yield := interrupt.Yield{Module: "env", Name: "yield", Args: []int32{-2, 7}}
	for _, withGlobal := range []bool{false, true} {
		ctx := context.Background()
		out, err := interrupt.Instrument(testModule(withGlobal), yield, 1000)
		if err != nil {
			t.Fatal(err)
		}
		r := wazero.NewRuntime(ctx)
		defer r.Close(ctx)
		var calls int
		_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				if int32(stack[0]) != -2 || int32(stack[1]) != 7 {
					panic("wrong yield arguments")
				}
				calls++
				if ctx.Err() != nil {
					panic(errStop)
				}
				stack[0] = 99
			}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
			Export("yield").Instantiate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := r.Instantiate(ctx, out)
		if err != nil {
			t.Fatalf("instantiate instrumented module: %v", err)
		}
		if withGlobal {
			if g := mod.ExportedGlobal("g"); g == nil || g.Get() != 42 {
				t.Fatalf("existing global lost: %v", g)
			}
		}

		// Semantics are kept and yield runs every 1000 iterations.
		res, err := mod.ExportedFunction("sum").Call(ctx, 50000)
		if err != nil || int32(res[0]) != 1250025000 {
			t.Fatalf("sum(50000) = %v, %v", res, err)
		}
		if calls != 50 {
			t.Fatalf("yield called %d times for 50001 iterations, want 50", calls)
		}

		// A runaway loop is stopped by the yield function.
		dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		start := time.Now()
		_, err = mod.ExportedFunction("spin").Call(dctx)
		cancel()
		if !errors.Is(err, errStop) {
			t.Fatalf("spin returned %v, want errStop", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("interrupt took %v", d)
		}
	}
}

func TestInstrumentRefuses(t *testing.T) {
	yield := interrupt.Yield{Module: "env", Name: "yield", Args: []int32{1, 2}}
	typ := section(1, 0x02, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00)
	imp := section(2, 0x01, 0x03, 'e', 'n', 'v', 0x05, 'y', 'i', 'e', 'l', 'd', 0x00, 0x00)
	fn := section(3, 0x01, 0x01)
	simd := section(10, 0x01, 0x04, 0x00, 0xfd, 0x0c, 0x0b) // a SIMD instruction
	for name, c := range map[string]struct {
		m     []byte
		yield interrupt.Yield
	}{
		"empty":           {nil, yield},
		"magic":           {[]byte("hello world!"), yield},
		"truncated":       {testModule(false)[:30], yield},
		"no code":         {module(typ, imp), yield},
		"simd":            {module(typ, imp, fn, simd), yield},
		"no yield import": {testModule(false), interrupt.Yield{Module: "env", Name: "other"}},
		"wrong arity":     {testModule(false), interrupt.Yield{Module: "env", Name: "yield", Args: []int32{1}}},
	} {
		if _, err := interrupt.Instrument(c.m, c.yield, 1000); err == nil {
			t.Errorf("%s: instrumented, want an error", name)
		}
	}
}

// FuzzInstrument: Instrument never panics on any bytes, and what it makes
// of a module wazero accepts is a module wazero accepts.
func FuzzInstrument(f *testing.F) {
	f.Add(testModule(false))
	f.Add(testModule(true))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add(module(section(10, 0x01, 0x05, 0x00, 0x03, 0x40, 0x0b, 0x0b)))
	yield := interrupt.Yield{Module: "env", Name: "yield", Args: []int32{1, 2}}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, m []byte) {
		out, err := interrupt.Instrument(m, yield, 3)
		if err != nil {
			return
		}
		c, err := rt.CompileModule(ctx, m)
		if err != nil {
			return // an invalid module may stay invalid
		}
		c.Close(ctx)
		c, err = rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the instrumented form of a valid module is invalid: %v", err)
		}
		c.Close(ctx)
	})
}
