package memo

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
	"github.com/aclc-dev/aclc/wasm/internal/wasmbin"
)

func vec(n int, elems ...[]byte) []byte {
	out := leb128.AppendUint32(nil, uint32(n))
	for _, e := range elems {
		out = append(out, e...)
	}
	return out
}

func sec(id byte, content []byte) []byte {
	return append(leb128.AppendUint32([]byte{id}, uint32(len(content))), content...)
}

func str(s string) []byte { return wasmbin.AppendName(nil, s) }

func u32(v uint32) []byte { return leb128.AppendUint32(nil, v) }

// testModule builds a module shaped like an OPA policy for the parts the
// rewrite reads: an imported function, a memory, a bump allocator exported
// as opa_malloc, the five memoization functions (bodies `unreachable`,
// named in the name section as OPA's compiler names them) exported as
// init, push, pop, insert and get for the test to call, and the allocator's
// heap pointer exported as the mutable global "heap".
//
// names maps function indices to names; nil means the standard ones.
func testModule(names map[uint32]string) []byte {
	if names == nil {
		names = map[uint32]string{
			2: "opa_memoize_init", 3: "opa_memoize_push", 4: "opa_memoize_pop",
			5: "opa_memoize_insert", 6: "opa_memoize_get", 1: "opa_malloc",
		}
	}
	types := vec(4,
		[]byte{0x60, 0, 0},             // 0: () -> ()
		[]byte{0x60, 2, 0x7f, 0x7f, 0}, // 1: (i32, i32) -> ()
		[]byte{0x60, 1, 0x7f, 1, 0x7f}, // 2: (i32) -> i32
		[]byte{0x60, 1, 0x7f, 0})       // 3: (i32) -> ()
	imports := vec(1, str("env"), str("opa_abort"), []byte{0x00, 3})
	funcs := vec(6, []byte{2, 0, 0, 0, 1, 2})
	memory := vec(1, []byte{0x00, 2})
	globals := vec(1, []byte{0x7f, 0x01, opI32Const}, leb128.AppendInt32(nil, 4096), []byte{opEnd})
	exports := vec(8,
		str("memory"), []byte{0x02, 0},
		str("opa_malloc"), []byte{0x00, 1},
		str("init"), []byte{0x00, 2},
		str("push"), []byte{0x00, 3},
		str("pop"), []byte{0x00, 4},
		str("insert"), []byte{0x00, 5},
		str("get"), []byte{0x00, 6},
		str("heap"), []byte{0x03, 0})
	// opa_malloc(n): p = heap; heap += n rounded up to 8; return p.
	malloc := body(1, code{}.
		idx(opGlobalGet, 0).idx(opLocalSet, 1).
		idx(opGlobalGet, 0).idx(opLocalGet, 0).i32(7).op(opI32Add).i32(-8).op(0x71). // i32.and
		op(opI32Add).idx(opGlobalSet, 0).
		idx(opLocalGet, 1))
	unreachable := []byte{0, 0x00, opEnd}
	bodies := [][]byte{malloc, unreachable, unreachable, unreachable, unreachable, unreachable}
	var codeSec []byte
	codeSec = u32(uint32(len(bodies)))
	for _, b := range bodies {
		codeSec = append(append(codeSec, u32(uint32(len(b)))...), b...)
	}
	var nameMap [][]byte
	for idx := range uint32(7) {
		if n, ok := names[idx]; ok {
			nameMap = append(nameMap, append(u32(idx), str(n)...))
		}
	}
	fnNames := vec(len(nameMap), nameMap...)
	nameSec := append(str("name"), append([]byte{1}, append(u32(uint32(len(fnNames))), fnNames...)...)...)

	m := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range [][]byte{
		sec(secType, types), sec(secImport, imports), sec(secFunc, funcs),
		sec(5, memory), sec(secGlobal, globals), sec(secExport, exports),
		sec(secCode, codeSec), sec(secCustom, nameSec),
	} {
		m = append(m, s...)
	}
	return m
}

// harness runs a rewritten test module.
type harness struct {
	ctx                          context.Context
	mod                          api.Module
	init, push, pop, insert, get api.Function
	heapGlobal                   api.MutableGlobal
	evalHeap                     uint64
}

func newHarness(t *testing.T, module []byte, interpreter bool) *harness {
	t.Helper()
	out, size, err := Rewrite(module)
	if err != nil {
		t.Fatal(err)
	}
	if size != 7*slotBytes {
		t.Fatalf("table size %d, want %d", size, 7*slotBytes)
	}
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig()
	if interpreter {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	t.Cleanup(func() { rt.Close(ctx) })
	_, err = rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(uint32) { panic("opa_abort") }).Export("opa_abort").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		t.Fatalf("instantiate the rewritten module: %v", err)
	}
	h := &harness{ctx: ctx, mod: mod}
	for name, f := range map[string]*api.Function{"init": &h.init, "push": &h.push, "pop": &h.pop, "insert": &h.insert, "get": &h.get} {
		*f = mod.ExportedFunction(name)
	}
	h.heapGlobal = mod.ExportedGlobal("heap").(api.MutableGlobal)
	// The host's part: allocate and zero the table below the evaluation
	// heap, and publish its address.
	addr := h.call(mod.ExportedFunction("opa_malloc"), uint64(size))[0]
	if !mod.Memory().Write(uint32(addr), make([]byte, size)) {
		t.Fatal("write table")
	}
	mod.ExportedGlobal(TableGlobal).(api.MutableGlobal).Set(addr)
	h.evalHeap = h.heapGlobal.Get()
	return h
}

func (h *harness) call(f api.Function, args ...uint64) []uint64 {
	res, err := f.Call(h.ctx, args...)
	if err != nil {
		panic(err)
	}
	return res
}

// startEval resets the heap as opa_eval does, leaving the previous
// evaluation's frame records and log behind as garbage, and calls init.
func (h *harness) startEval() {
	h.heapGlobal.Set(h.evalHeap)
	h.call(h.init)
}

// model is the semantics of OPA's C library: a stack of frames, each a map.
type model []map[int32]uint32

func TestRewriteMatchesFrames(t *testing.T) {
	for _, c := range []struct {
		name          string
		initial, wrap uint32
		interpreter   bool
	}{
		{"compiler", 0, 1 << 31, false},
		{"interpreter", 0, 1 << 31, true},
		{"counter near the limit", 1<<31 - 40, 1 << 31, false},
		// Stamps cycle through a few values: without the clearing at
		// wrap-around, slots written cycles ago would match again.
		{"counter wraps every few frames", 0, 5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(i, w uint32) { initialStamp, stampLimit = i, w }(initialStamp, stampLimit)
			initialStamp, stampLimit = c.initial, c.wrap
			h := newHarness(t, testModule(nil), c.interpreter)
			rng := rand.New(rand.NewPCG(1, 2))
			for eval := range 300 {
				h.startEval()
				m := model{{}}
				for step := range 60 {
					top := m[len(m)-1]
					switch op := rng.IntN(10); {
					case op < 1 && len(m) < 6:
						h.call(h.push)
						m = append(m, map[int32]uint32{})
					case op < 2 && len(m) > 1:
						h.call(h.pop)
						m = m[:len(m)-1]
					case op < 5:
						i, v := rng.Int32N(7), rng.Uint32N(1000)
						h.call(h.insert, uint64(uint32(i)), uint64(v))
						top[i] = v
					default:
						// Out-of-range indices are never memoized.
						i := rng.Int32N(9) - 1
						got := uint32(h.call(h.get, uint64(uint32(i)))[0])
						if want := top[i]; got != want {
							t.Fatalf("eval %d step %d, depth %d: get(%d) = %d, want %d", eval, step, len(m), i, got, want)
						}
					}
				}
			}
		})
	}
}

func TestRewriteOutOfRange(t *testing.T) {
	h := newHarness(t, testModule(nil), false)
	h.startEval()
	for _, i := range []int32{7, 8, -1, 1 << 30} {
		h.call(h.insert, uint64(uint32(i)), 5)
		if got := h.call(h.get, uint64(uint32(i)))[0]; got != 0 {
			t.Errorf("get(%d) = %d after insert, want 0", i, got)
		}
	}
}

// TestRewriteWithoutTable pins that a host that does not set up the table
// gets a module that memoizes nothing, rather than one that writes at
// address 0.
func TestRewriteWithoutTable(t *testing.T) {
	out, _, err := Rewrite(testModule(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(uint32) {}).Export("opa_abort").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := mod.Memory().Read(0, 4096)
	before = append([]byte(nil), before...)
	for _, step := range [][]any{{"init"}, {"insert", 3, 9}, {"push"}, {"insert", 3, 8}, {"pop"}} {
		args := make([]uint64, 0, 2)
		for _, a := range step[1:] {
			args = append(args, uint64(a.(int)))
		}
		if _, err := mod.ExportedFunction(step[0].(string)).Call(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := mod.ExportedFunction("get").Call(ctx, 3); got[0] != 0 {
		t.Fatalf("get(3) = %d without a table, want 0", got[0])
	}
	after, _ := mod.Memory().Read(0, 4096)
	if string(before) != string(after) {
		t.Fatal("memory below the heap changed without a table")
	}
}

func TestRewriteWithoutPushPop(t *testing.T) {
	// As OPA compiles a policy without `with`: push and pop are unnamed.
	h := newHarness(t, testModule(map[uint32]string{
		2: "opa_memoize_init", 5: "opa_memoize_insert", 6: "opa_memoize_get",
	}), false)
	h.startEval()
	h.call(h.insert, 4, 11)
	if got := h.call(h.get, 4)[0]; got != 11 {
		t.Fatalf("get(4) = %d, want 11", got)
	}
	h.startEval()
	if got := h.call(h.get, 4)[0]; got != 0 {
		t.Fatalf("get(4) = %d in a new evaluation, want 0", got)
	}
}

func TestRewriteRefuses(t *testing.T) {
	std := testModule(nil)
	for name, m := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("not a module"),
		"truncated": std[:len(std)-40],
		"no names":  testModule(map[uint32]string{}),
		"no get":    testModule(map[uint32]string{2: "opa_memoize_init", 5: "opa_memoize_insert"}),
		"push without pop": testModule(map[uint32]string{
			2: "opa_memoize_init", 3: "opa_memoize_push", 5: "opa_memoize_insert", 6: "opa_memoize_get",
		}),
		"signature": testModule(map[uint32]string{ // get named on insert's index
			2: "opa_memoize_init", 6: "opa_memoize_insert", 5: "opa_memoize_get",
		}),
		"imported": testModule(map[uint32]string{
			0: "opa_memoize_init", 5: "opa_memoize_insert", 6: "opa_memoize_get",
		}),
		"malloc named as a memoization function": testModule(map[uint32]string{
			2: "opa_memoize_init", 5: "opa_memoize_insert", 1: "opa_memoize_get",
		}),
		"name twice": testModule(map[uint32]string{
			2: "opa_memoize_init", 3: "opa_memoize_init", 5: "opa_memoize_insert", 6: "opa_memoize_get",
		}),
	} {
		if _, _, err := Rewrite(m); err == nil {
			t.Errorf("%s: rewritten, want an error", name)
		}
	}
	twice, _, err := Rewrite(std)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Rewrite(twice); err == nil || !strings.Contains(err.Error(), TableGlobal) {
		t.Errorf("rewriting a rewritten module: %v, want an error naming %s", err, TableGlobal)
	}
}

// FuzzRewrite: Rewrite never panics, and what it returns is a valid module.
func FuzzRewrite(f *testing.F) {
	f.Add(testModule(nil))
	f.Add(testModule(map[uint32]string{2: "opa_memoize_init", 5: "opa_memoize_insert", 6: "opa_memoize_get"}))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	// A module as OPA compiles it, push and pop included.
	cr, err := rego.New(rego.Query("data.fz.p"), rego.Module("fz.rego", `package fz
q := input.x
p := [q, r] if r := q with input.x as 1
`)).Compile(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	if _, _, err := Rewrite(cr.Bytes); err != nil {
		f.Fatalf("an OPA-compiled module is refused: %v", err)
	}
	f.Add(cr.Bytes)
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, module []byte) {
		out, _, err := Rewrite(module)
		if err != nil {
			return
		}
		if _, cerr := rt.CompileModule(ctx, module); cerr != nil {
			return // an invalid module may stay invalid
		}
		c, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the rewrite of a valid module is invalid: %v", err)
		}
		c.Close(ctx)
	})
}
