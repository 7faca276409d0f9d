package wasm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/aclc-dev/aclc/wasm/internal/memo"
)

// instance is one instantiated copy of the policy: its own host module,
// glue module (owning the linear memory) and policy module. An instance is
// used by one goroutine at a time (it is taken from and returned to the
// pool).
type instance struct {
	p *Policy

	hostCompiled wazero.CompiledModule
	host         api.Module
	glue         api.Module
	mod          api.Module
	mem          api.Memory

	fnEval       api.Function
	fnMalloc     api.Function
	fnFree       api.Function
	fnJSONParse  api.Function
	fnJSONDump   api.Function
	fnValueParse api.Function
	fnValueDump  api.Function
	fnHeapPtrGet api.Function
	fnHeapPtrSet api.Function
	fnStash      api.Function // nil before ABI 1.3
	fnEvalCtx    api.Function // eval(ctx), for the direct path

	// writer and printer move the input and the result across the
	// boundary in the C library's layout (see layout.go); argPrinter
	// prints the arguments of host builtins.
	writer     inputWriter
	printer    valuePrinter
	argPrinter valuePrinter

	// evalStack is the reused parameter/result stack of opa_eval.
	evalStack [7]uint64
	// callStack is the reused stack for the small exports called from the
	// host (malloc, parse, dump), including nested calls made while a
	// builtin runs inside opa_eval; those never overlap.
	callStack [2]uint64

	// abortMsg is set by opa_abort before it traps.
	aborted  bool
	abortMsg string

	// interrupted is set when the yield check found the context done.
	interrupted bool

	// startPages is the memory size after data loading; growth well beyond
	// it gets the instance recycled.
	startPages uint32
}

// abortError is the panic value of opa_abort; wazero turns it into the
// error of the call.
type abortError struct{ msg string }

func (e *abortError) Error() string { return "opa_abort: " + e.msg }

// hostCallError is the panic value used when a call back into the guest,
// made while a builtin runs, fails; it aborts the evaluation.
type hostCallError struct{ err error }

func (e *hostCallError) Error() string { return "host call: " + e.err.Error() }
func (e *hostCallError) Unwrap() error { return e.err }

var (
	i32x1 = []api.ValueType{api.ValueTypeI32}
	i32x2 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}
	i32x3 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}
	i32x4 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}
	i32x5 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}
	i32x6 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}
)

// newInstance instantiates host, glue and policy modules.
//
// Module naming: wazero resolves imports by module name within a Runtime
// and names must be unique, yet every instance needs its own "env" (its own
// memory) and its own host functions (bound to that instance). Instead of
// one Runtime per instance (which recompiles, or at best re-loads from the
// cache, the policy for every instance), all three modules are instantiated
// anonymously (name "") in the single Runtime of the Policy, and their
// imports are wired with wazero's experimental ImportResolver: the glue
// module's "opa" import resolves to this instance's host module and the
// policy's "env" import to this instance's glue module. The policy and the
// glue module are compiled once per Policy; only the tiny host module
// (whose Go functions close over the instance) is compiled per instance.
func (p *Policy) newInstance(ctx context.Context, glue wazero.CompiledModule) (_ *instance, err error) {
	inst := &instance{p: p}
	p.created.Add(1)
	defer func() {
		if err != nil {
			inst.close()
		}
	}()

	// wazero wants a name to compile a host module; the instance itself is
	// anonymous (see anon below), so the name is never registered.
	hb := p.rt.NewHostModuleBuilder(hostModuleName)
	fb := func(f api.GoModuleFunc, params []api.ValueType, results []api.ValueType, name string) {
		hb.NewFunctionBuilder().WithGoModuleFunction(f, params, results).Export(name)
	}
	fb(inst.hostAbort, i32x1, nil, "opa_abort")
	fb(inst.hostPrintln, i32x1, nil, "opa_println")
	fb(inst.hostBuiltin0, i32x2, i32x1, "opa_builtin0")
	fb(inst.hostBuiltin1, i32x3, i32x1, "opa_builtin1")
	fb(inst.hostBuiltin2, i32x4, i32x1, "opa_builtin2")
	fb(inst.hostBuiltin3, i32x5, i32x1, "opa_builtin3")
	fb(inst.hostBuiltin4, i32x6, i32x1, "opa_builtin4")
	if inst.hostCompiled, err = hb.Compile(ctx); err != nil {
		return nil, fmt.Errorf("compile host module: %w", err)
	}
	anon := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	if inst.host, err = p.rt.InstantiateModule(ctx, inst.hostCompiled, anon); err != nil {
		return nil, fmt.Errorf("instantiate host module: %w", err)
	}
	host := inst.host
	gctx := experimental.WithImportResolver(ctx, func(name string) api.Module {
		if name == hostModuleName {
			return host
		}
		return nil
	})
	if inst.glue, err = p.rt.InstantiateModule(gctx, glue, anon); err != nil {
		return nil, fmt.Errorf("instantiate env module: %w", err)
	}
	env := inst.glue
	pctx := experimental.WithImportResolver(ctx, func(name string) api.Module {
		if name == envModuleName {
			return env
		}
		return nil
	})
	if inst.mod, err = p.rt.InstantiateModule(pctx, p.compiled, anon); err != nil {
		return nil, fmt.Errorf("instantiate policy module: %w", err)
	}
	if err := checkABI(inst.mod); err != nil {
		return nil, err
	}
	inst.mem = inst.mod.Memory()
	if inst.mem == nil {
		return nil, errors.New("invalid module: no memory")
	}
	for _, f := range []struct {
		fn   *api.Function
		name string
	}{
		{&inst.fnEval, "opa_eval"},
		{&inst.fnMalloc, "opa_malloc"},
		{&inst.fnFree, "opa_free"},
		{&inst.fnJSONParse, "opa_json_parse"},
		{&inst.fnJSONDump, "opa_json_dump"},
		{&inst.fnValueParse, "opa_value_parse"},
		{&inst.fnValueDump, "opa_value_dump"},
		{&inst.fnHeapPtrGet, "opa_heap_ptr_get"},
		{&inst.fnHeapPtrSet, "opa_heap_ptr_set"},
	} {
		if *f.fn = inst.mod.ExportedFunction(f.name); *f.fn == nil {
			return nil, fmt.Errorf("invalid module: missing export %q", f.name)
		}
	}
	inst.fnStash = inst.mod.ExportedFunction("opa_heap_blocks_stash")
	inst.fnEvalCtx = inst.mod.ExportedFunction("eval")
	return inst, nil
}

// checkABI requires ABI major version 1 and minor version >= 2 (opa_eval).
func checkABI(mod api.Module) error {
	major := mod.ExportedGlobal("opa_wasm_abi_version")
	minor := mod.ExportedGlobal("opa_wasm_abi_minor_version")
	if major == nil || minor == nil {
		return errors.New("invalid module: not an OPA policy (no opa_wasm_abi_version/opa_wasm_abi_minor_version globals)")
	}
	maj, mnr := int32(uint32(major.Get())), int32(uint32(minor.Get()))
	if maj != 1 || mnr < 2 {
		return fmt.Errorf("invalid module: unsupported OPA Wasm ABI version %d.%d (need 1.2 or later)", maj, mnr)
	}
	return nil
}

// close releases the instance's modules (safe on partly built instances).
func (inst *instance) close() {
	ctx := context.Background()
	for _, m := range []api.Module{inst.mod, inst.glue, inst.host} {
		if m != nil {
			_ = m.Close(ctx)
		}
	}
	if inst.hostCompiled != nil {
		_ = inst.hostCompiled.Close(ctx)
	}
}

// call invokes a small export with up to two arguments and one result.
func (inst *instance) call(ctx context.Context, fn api.Function, args ...uint32) (uint32, error) {
	s := inst.callStack[:]
	for i, a := range args {
		s[i] = uint64(a)
	}
	if err := fn.CallWithStack(ctx, s); err != nil {
		return 0, err
	}
	return uint32(s[0]), nil
}

// initHeap initialises the guest heap and returns the base heap pointer.
func (inst *instance) initHeap(ctx context.Context) (uint32, error) {
	if _, err := inst.call(ctx, inst.fnMalloc, 0); err != nil {
		return 0, fmt.Errorf("init heap: %w", err)
	}
	base, err := inst.call(ctx, inst.fnHeapPtrGet)
	if err != nil {
		return 0, fmt.Errorf("init heap: %w", err)
	}
	return base, nil
}

// parseJSON copies JSON text into guest memory and parses it; 0 means the
// guest could not parse it.
func (inst *instance) parseJSON(ctx context.Context, text []byte) (uint32, error) {
	return inst.parse(ctx, inst.fnJSONParse, text)
}

// parseRegoText copies Rego value text into guest memory and parses it with
// opa_value_parse; 0 means the guest could not parse it.
func (inst *instance) parseRegoText(ctx context.Context, text []byte) (uint32, error) {
	return inst.parse(ctx, inst.fnValueParse, text)
}

func (inst *instance) parse(ctx context.Context, fn api.Function, text []byte) (uint32, error) {
	n := uint32(len(text))
	addr, err := inst.call(ctx, inst.fnMalloc, n)
	if err != nil {
		return 0, err
	}
	if !inst.mem.Write(addr, text) {
		return 0, fmt.Errorf("write %d bytes at %#x: out of range", n, addr)
	}
	return inst.call(ctx, fn, addr, n)
}

// dumpJSON serialises the value at addr with opa_json_dump and returns a
// view of the NUL-terminated text in guest memory (valid until the next
// guest call).
func (inst *instance) dumpJSON(ctx context.Context, addr uint32) ([]byte, error) {
	return inst.dump(ctx, inst.fnJSONDump, addr)
}

// readValue reads a value as opa_value_dump prints it, its sets sorted
// (see value.go). The value refers to text.
func readValue(text []byte) (value, error) {
	v, err := parseValue(text, maxResultDepth)
	if err != nil {
		return value{}, fmt.Errorf("read value %.64q: %w", text, err)
	}
	canonicalize(&v)
	return v, nil
}

func (inst *instance) dump(ctx context.Context, fn api.Function, addr uint32) ([]byte, error) {
	s, err := inst.call(ctx, fn, addr)
	if err != nil {
		return nil, err
	}
	b, ok := inst.cString(s)
	if !ok {
		return nil, fmt.Errorf("read dumped value at %#x: out of range or unterminated", s)
	}
	return b, nil
}

// cString returns a view of the NUL-terminated string at addr.
func (inst *instance) cString(addr uint32) ([]byte, bool) {
	size := inst.mem.Size()
	if addr >= size {
		return nil, false
	}
	buf, ok := inst.mem.Read(addr, size-addr)
	if !ok {
		return nil, false
	}
	n := bytes.IndexByte(buf, 0)
	if n < 0 {
		return nil, false
	}
	return buf[:n:n], true
}

// loadData parses the data document in this (first) instance and records
// the heap layout every other instance copies.
func (inst *instance) loadData(ctx context.Context, data []byte) error {
	p := inst.p
	base, err := inst.initHeap(ctx)
	if err != nil {
		return err
	}
	n := uint32(len(data))
	str, err := inst.call(ctx, inst.fnMalloc, n)
	if err != nil {
		return fmt.Errorf("load data: %w", inst.describe(err))
	}
	if !inst.mem.Write(str, data) {
		return errors.New("load data: write out of range")
	}
	dataAddr, err := inst.call(ctx, inst.fnJSONParse, str, n)
	if err != nil {
		return fmt.Errorf("load data: %w", inst.describe(err))
	}
	if dataAddr == 0 {
		return errors.New("load data: the policy module could not parse the data document")
	}
	if _, err := inst.call(ctx, inst.fnFree, str); err != nil {
		return fmt.Errorf("load data: %w", inst.describe(err))
	}
	if err := inst.allocMemoTable(ctx); err != nil {
		return fmt.Errorf("load data: %w", err)
	}
	if inst.fnStash != nil {
		// Keep the free blocks of the data region out of the per-eval free
		// lists (ABI 1.3); the heap reset in opa_eval would otherwise hand
		// them out again.
		if _, err := inst.call(ctx, inst.fnStash); err != nil {
			return fmt.Errorf("load data: %w", inst.describe(err))
		}
	}
	evalHeapPtr, err := inst.call(ctx, inst.fnHeapPtrGet)
	if err != nil {
		return fmt.Errorf("load data: %w", err)
	}
	if evalHeapPtr < base {
		return fmt.Errorf("load data: heap pointer moved backwards (%#x < %#x)", evalHeapPtr, base)
	}
	// The snapshot starts at address 0, not at the heap base: the module's
	// start function parses its own tables and frees temporaries, and the
	// data parser reuses those freed blocks, which lie below the heap base.
	// The allocator's state (free lists, stash) lives in static memory
	// there too. Copying the whole prefix gives every instance the exact
	// memory image of the first one.
	snap, ok := inst.mem.Read(0, evalHeapPtr)
	if !ok {
		return errors.New("load data: heap out of range")
	}
	p.baseHeapPtr = base
	p.evalHeapPtr = evalHeapPtr
	p.dataAddr = dataAddr
	p.snapshot = bytes.Clone(snap)
	p.snapshotPages = inst.mem.Size() / wasmPageSize
	inst.startPages = p.snapshotPages
	return nil
}

// allocMemoTable allocates the table of the rewritten memoization
// functions (see internal/memo), if the module was rewritten.
//
// The table is allocated here, with the module's own allocator, between
// the data document and the evaluation heap, rather than by the module at
// each evaluation: opa_eval resets the heap to evalHeapPtr every time, so
// a table in the evaluation heap would have to be allocated and cleared
// again for every decision, while this one lasts for the instance's life
// (the stamps of internal/memo make clearing unnecessary) and is part of
// the snapshot every other instance copies, at the same address. Being
// allocated with opa_malloc, it is known to the allocator, which never
// hands it out again.
func (inst *instance) allocMemoTable(ctx context.Context) error {
	p := inst.p
	if p.memoBytes == 0 {
		return nil
	}
	addr, err := inst.call(ctx, inst.fnMalloc, p.memoBytes)
	if err != nil {
		return fmt.Errorf("allocate memoization table: %w", inst.describe(err))
	}
	if addr == 0 || !inst.mem.Write(addr, make([]byte, p.memoBytes)) {
		return fmt.Errorf("allocate memoization table: %d bytes at %#x: out of range", p.memoBytes, addr)
	}
	if err := inst.setMemoTable(addr); err != nil {
		return err
	}
	p.memoTable = addr
	return nil
}

// setMemoTable points the rewritten memoization functions at the table.
func (inst *instance) setMemoTable(addr uint32) error {
	g, ok := inst.mod.ExportedGlobal(memo.TableGlobal).(api.MutableGlobal)
	if !ok {
		return fmt.Errorf("invalid module: no mutable global %q", memo.TableGlobal)
	}
	g.Set(uint64(addr))
	return nil
}

// restoreData gives a fresh instance the data of the first one by copying
// memory [0, evalHeapPtr) of the first instance instead of parsing the
// data document again. The heap layout is deterministic for a module, so the
// copied value pointers are valid; the instance was created with the glue
// module whose initial memory already has the first instance's final size,
// so the guest allocator's notion of the heap top (taken from the memory size
// at start-up) matches too.
func (inst *instance) restoreData(ctx context.Context) error {
	p := inst.p
	base, err := inst.initHeap(ctx)
	if err != nil {
		return err
	}
	if base != p.baseHeapPtr {
		return fmt.Errorf("restore data: heap base %#x differs from the first instance's %#x", base, p.baseHeapPtr)
	}
	if !inst.mem.Write(0, p.snapshot) {
		return errors.New("restore data: write out of range")
	}
	if _, err := inst.call(ctx, inst.fnHeapPtrSet, p.evalHeapPtr); err != nil {
		return fmt.Errorf("restore data: %w", err)
	}
	if p.memoTable != 0 {
		if err := inst.setMemoTable(p.memoTable); err != nil {
			return fmt.Errorf("restore data: %w", err)
		}
	}
	inst.startPages = inst.mem.Size() / wasmPageSize
	return nil
}

// Result formats of eval.
type resultFormat uint8

const (
	formatJSON resultFormat = iota // JSON, sets as sorted arrays
	formatRego                     // Rego value text, sets as set literals
)

// eval runs one evaluation. It returns the entrypoint's value (a fresh copy)
// in format, and whether the instance should be recycled even though it
// succeeded.
func (inst *instance) eval(ctx context.Context, entrypoint int32, input []byte, format resultFormat) ([]byte, bool, error) {
	var res []byte
	var recycle bool
	var err error
	if inst.p.direct && format == formatJSON {
		var plain bool
		res, plain, recycle, err = inst.evalDirect(ctx, entrypoint, input, true)
		if err == nil && plain {
			return append(make([]byte, 0, len(res)), res...), recycle, nil
		}
	} else {
		res, recycle, err = inst.evalResultSet(ctx, entrypoint, input)
	}
	if err != nil {
		return nil, false, err
	}
	if format == formatJSON {
		if out, ok := plainResult(res); ok {
			return out, recycle, nil
		}
	}
	v, err := unwrapResult(res)
	if err != nil {
		return nil, false, err
	}
	if format == formatRego {
		return appendRego(nil, &v), recycle, nil
	}
	return appendJSON(nil, &v), recycle, nil
}

// evalResultSet runs one evaluation and returns a view of the result set
// in guest memory (valid until the next guest call), in Rego value text as
// opa_value_dump prints it (a set of bindings), and whether the instance
// should be recycled.
//
// The result is read as Rego text, not as the JSON of opa_json_dump: JSON
// would turn sets into arrays in the order of the guest's hash table, and
// copy number literals written as .5 into the result as they are.
func (inst *instance) evalResultSet(ctx context.Context, entrypoint int32, input []byte) ([]byte, bool, error) {
	p := inst.p
	mem := inst.mem
	n := uint32(len(input))
	addr := p.evalHeapPtr
	if uint64(addr)+uint64(n) > uint64(mem.Size()) {
		// Let the guest allocator grow the memory so that its heap-top
		// bookkeeping stays in step with the real memory size (growing it
		// from the host would make the guest grow it again later).
		a, err := inst.allocInput(ctx, n)
		if err != nil {
			return nil, false, err
		}
		addr = a
	}
	if n > 0 && !mem.Write(addr, input) {
		return nil, false, errors.New("wasm: write input: out of range")
	}
	s := inst.evalStack[:]
	s[0] = 0 // reserved
	s[1] = uint64(uint32(entrypoint))
	s[2] = uint64(p.dataAddr)
	s[3] = uint64(addr)
	s[4] = uint64(n)
	s[5] = uint64(addr + n) // heap pointer for this evaluation
	s[6] = 1                // format: Rego value text
	if err := inst.fnEval.CallWithStack(ctx, s); err != nil {
		return nil, false, inst.evalError(ctx, err)
	}
	res, ok := inst.cString(uint32(s[0]))
	if !ok {
		return nil, false, errors.New("wasm: read result: out of range or unterminated")
	}
	recycle := mem.Size()/wasmPageSize > inst.startPages+p.recycleSlack
	return res, recycle, nil
}

// evalDirect runs one evaluation as evalResultSet does, moving values in
// the C library's layout instead of in text (see layout.go): the host
// writes the parsed input and an evaluation context at the start of the
// evaluation heap, resets the guest's heap just past them and calls
// eval(ctx), the function opa_eval calls after parsing; then it prints the
// result set from guest memory as opa_value_dump would. Two guest calls
// instead of one, but the guest neither lexes the input nor prints the
// result. The text returned is valid until the next evaluation.
//
// With plain, it prints the value of the result set as compact JSON when
// plainResult would turn its text into JSON, and says so: the text is
// then neither printed nor read again.
func (inst *instance) evalDirect(ctx context.Context, entrypoint int32, input []byte, plain bool) (res []byte, isPlain, recycle bool, err error) {
	p := inst.p
	mem := inst.mem
	w := &inst.writer
	w.bools = p.internedBools
	build := func(base uint32) (inAddr, ctxAddr uint32, err error) {
		w.reset(base)
		if len(input) > 0 {
			if inAddr, err = w.document(input); err != nil {
				return 0, 0, err
			}
		}
		return inAddr, w.evalCtx(inAddr, p.dataAddr, entrypoint), nil
	}
	var inAddr, ctxAddr uint32
	err = inst.place(ctx, func(base uint32) (err error) {
		inAddr, ctxAddr, err = build(base)
		return err
	})
	if errors.Is(err, errLayout) {
		res, recycle, err = inst.evalResultSet(ctx, entrypoint, input)
		return res, false, recycle, err
	}
	if err != nil {
		return nil, false, false, err
	}
	rc, err := inst.call(ctx, inst.fnEvalCtx, ctxAddr)
	if err != nil {
		return nil, false, false, inst.evalError(ctx, err)
	}
	if rc != 0 {
		// opa_eval aborts so.
		return nil, false, false, errors.New("wasm: policy aborted: eval failed")
	}
	resAddr, ok := mem.ReadUint32Le(ctxAddr + 8)
	if !ok {
		return nil, false, false, errors.New("wasm: read result: out of range")
	}
	recycle = mem.Size()/wasmPageSize > inst.startPages+p.recycleSlack
	if plain && !p.cfg.checkLayout {
		if out, ok := inst.printResultJSON(&inst.printer, resAddr); ok {
			return out, true, recycle, nil
		}
	}
	res, err = inst.printValue(ctx, &inst.printer, resAddr)
	if err != nil {
		return nil, false, false, err
	}
	if p.cfg.checkLayout {
		if err := inst.checkDirect(ctx, inAddr, input, resAddr, res); err != nil {
			return nil, false, false, err
		}
		if err := inst.checkResultJSON(resAddr, res); err != nil {
			return nil, false, false, err
		}
	}
	return res, false, recycle, nil
}

// printResultJSON prints the value of the result set at addr as compact
// JSON into pr's buffer; false when plainResult would not turn its text
// into JSON.
func (inst *instance) printResultJSON(pr *valuePrinter, addr uint32) ([]byte, bool) {
	mem, ok := inst.mem.Read(0, inst.mem.Size())
	if !ok {
		return nil, false
	}
	pr.mem, pr.out, pr.json = mem, pr.out[:0], true
	defer func() { pr.mem, pr.json = nil, false }()
	v, ok := pr.resultValue(addr)
	if !ok || !pr.print(v, 0) {
		return nil, false
	}
	return pr.out, true
}

// checkResultJSON compares, for tests, the JSON printResultJSON prints of
// the result set at addr with plainResult's of its text: the same JSON
// whenever the first prints any.
func (inst *instance) checkResultJSON(addr uint32, text []byte) error {
	want, wok := plainResult(text)
	got, gok := inst.printResultJSON(&valuePrinter{}, addr)
	if gok && (!wok || !bytes.Equal(got, want)) {
		return fmt.Errorf("wasm: layout check: the host printed the result as %.200q, its text reads as %.200q (%v)", got, want, wok)
	}
	return nil
}

// place has build lay values out in inst.writer at the start of the
// evaluation heap, writes them there and resets the guest's heap just past
// them. When they do not fit in the memory, the guest's allocator grows it
// and reserves their room (as allocInput does for text), and build lays
// them out again there.
func (inst *instance) place(ctx context.Context, build func(base uint32) error) error {
	w := &inst.writer
	if err := build(inst.p.evalHeapPtr); err != nil {
		return err
	}
	if uint64(w.end()) <= uint64(inst.mem.Size()) {
		if !inst.mem.Write(w.base, w.buf) {
			return errors.New("wasm: write input: out of range")
		}
		if _, err := inst.call(ctx, inst.fnHeapPtrSet, w.end()); err != nil {
			return inst.evalError(ctx, err)
		}
		return nil
	}
	a, err := inst.allocInput(ctx, uint32(len(w.buf)))
	if err != nil {
		return err
	}
	if err := build(a); err != nil {
		return err
	}
	if !inst.mem.Write(w.base, w.buf) {
		return errors.New("wasm: write input: out of range")
	}
	return nil
}

// printValue prints the guest value at addr as opa_value_dump does, into
// pr's buffer; a value the printer does not read is printed by the guest.
func (inst *instance) printValue(ctx context.Context, pr *valuePrinter, addr uint32) ([]byte, error) {
	if mem, ok := inst.mem.Read(0, inst.mem.Size()); ok {
		pr.mem, pr.out, pr.json = mem, pr.out[:0], false
		ok = pr.print(addr, 0)
		pr.mem = nil
		if ok {
			return pr.out, nil
		}
	}
	return inst.dump(ctx, inst.fnValueDump, addr)
}

// checkDirect compares, for tests, what evalDirect did with what the guest
// does: the input the host wrote with the guest's parse of the same text,
// and the printed result with the guest's opa_value_dump.
func (inst *instance) checkDirect(ctx context.Context, inAddr uint32, input []byte, resAddr uint32, printed []byte) error {
	if err := inst.checkPrinted(ctx, printed, resAddr); err != nil {
		return err
	}
	if len(input) == 0 {
		return nil
	}
	parsed, err := inst.parseRegoText(ctx, input)
	if err != nil {
		return err
	}
	mem, ok := inst.mem.Read(0, inst.mem.Size())
	if !ok || !sameValue(mem, inAddr, parsed, 0) {
		return fmt.Errorf("wasm: layout check: the input the host wrote differs from the guest's parse of %.200q", input)
	}
	return nil
}

// checkPrinted compares, for tests, what the host printed of the value at
// addr with the guest's opa_value_dump of it.
func (inst *instance) checkPrinted(ctx context.Context, printed []byte, addr uint32) error {
	printed = bytes.Clone(printed)
	dumped, err := inst.dump(ctx, inst.fnValueDump, addr)
	if err != nil {
		return err
	}
	if !bytes.Equal(printed, dumped) {
		return fmt.Errorf("wasm: layout check: the host printed %.200q, the guest %.200q", printed, dumped)
	}
	return nil
}

// checkLayout tells whether the host can move values in the module's own
// layout: the module exports eval, the values the host writes for a probe
// document are those the module's parser builds from it, and the host
// prints them as the module's opa_value_dump does. It runs on the first
// instance after data loading, in the evaluation heap.
func (inst *instance) checkLayout(ctx context.Context) bool {
	if inst.fnEvalCtx == nil || len(inst.fnEvalCtx.Definition().ParamTypes()) != 1 || len(inst.fnEvalCtx.Definition().ResultTypes()) != 1 {
		return false
	}
	const probe = `{"a": [1, -2.5e3, true, false, null, "x\u00e9\n\"\\\/\ud83d\ude00 ☺", 0.5], "b": {}, "c": [],
		"k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": {"z": null}, "dup": 1, "dup": {"y": "\u0001"},
		"arr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, [12], {"13": 13}], "": ""}`
	// The module's parser may return interned booleans, static values
	// the host then returns too.
	for i, text := range []string{"false", "true"} {
		addr, err := inst.parseRegoText(ctx, []byte(text))
		if err != nil || addr == 0 {
			return false
		}
		if b, ok := inst.mem.Read(addr, 2); ok && b[0] == typeBoolInterned && addr < inst.p.baseHeapPtr {
			inst.p.internedBools[i] = addr
		}
	}
	inst.writer.bools = inst.p.internedBools
	var hostAddr uint32
	err := inst.place(ctx, func(base uint32) (err error) {
		inst.writer.reset(base)
		hostAddr, err = inst.writer.document([]byte(probe))
		return err
	})
	if err != nil {
		return false
	}
	guestAddr, err := inst.parseRegoText(ctx, []byte(probe))
	if err != nil || guestAddr == 0 {
		return false
	}
	mem, ok := inst.mem.Read(0, inst.mem.Size())
	if !ok || !sameValue(mem, hostAddr, guestAddr, 0) {
		return false
	}
	printed, err := inst.printValue(ctx, &inst.printer, guestAddr)
	if err != nil {
		return false
	}
	printed = bytes.Clone(printed)
	dumped, err := inst.dump(ctx, inst.fnValueDump, guestAddr)
	return err == nil && bytes.Equal(printed, dumped)
}

// recycleSlack returns how far an instance's memory may grow past its size
// after data loading before the instance is replaced, to give the memory of
// an outlier evaluation back: half the headroom to the limit, at least
// 16 MiB and at most 32 MiB, so that a pool does not keep the memory of the
// largest inputs it has seen.
func recycleSlack(startPages, limitPages uint32) uint32 {
	return max(256, min(512, (limitPages-min(startPages, limitPages))/2))
}

// allocInput reserves n bytes for the input at the start of the evaluation
// heap with opa_malloc.
func (inst *instance) allocInput(ctx context.Context, n uint32) (uint32, error) {
	if _, err := inst.call(ctx, inst.fnHeapPtrSet, inst.p.evalHeapPtr); err != nil {
		return 0, inst.evalError(ctx, err)
	}
	a, err := inst.call(ctx, inst.fnMalloc, n)
	if err != nil {
		return 0, inst.evalError(ctx, err)
	}
	if uint64(a)+uint64(n) > uint64(inst.mem.Size()) {
		return 0, errors.New("wasm: allocate input: out of range")
	}
	return a, nil
}

const maxResultDepth = 1 << 16

// unwrapResult reads the result set of a compiled entrypoint, {{"result":
// v}} in Rego text (set() when undefined), and returns v, its sets sorted.
// The value refers to res.
func unwrapResult(res []byte) (value, error) {
	rs, err := parseValue(res, maxResultDepth)
	if err != nil || (rs.kind != kindSet && rs.kind != kindArray) {
		return value{}, fmt.Errorf("wasm: unexpected result shape %.64q", res)
	}
	switch len(rs.elems) {
	case 0:
		return value{}, ErrUndefined
	case 1:
	default:
		// E.g. a module whose entrypoint yields several results.
		return value{}, fmt.Errorf("wasm: unexpected result shape %.64q", res)
	}
	b := rs.elems[0]
	if b.kind != kindObject || len(b.elems) != 2 || b.elems[0].kind != kindString || string(b.elems[0].raw) != "result" {
		return value{}, fmt.Errorf("wasm: unexpected result shape %.64q", res)
	}
	v := b.elems[1]
	canonicalize(&v)
	return v, nil
}

// evalError classifies the error of a guest call made for an evaluation.
func (inst *instance) evalError(ctx context.Context, err error) error {
	if inst.aborted {
		if inst.abortMsg == "opa_malloc: failed" {
			return fmt.Errorf("wasm: policy aborted: %s (memory limit of %d pages reached)", inst.abortMsg, inst.p.cfg.memoryLimitPages)
		}
		return fmt.Errorf("wasm: policy aborted: %s", inst.abortMsg)
	}
	if inst.interrupted {
		return fmt.Errorf("wasm: evaluation interrupted: %w", ctx.Err())
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeContextCanceled, sys.ExitCodeDeadlineExceeded:
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("wasm: evaluation interrupted: %w", cerr)
			}
			return fmt.Errorf("wasm: evaluation interrupted: %w", err)
		}
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("wasm: evaluation interrupted: %w", cerr)
	}
	return fmt.Errorf("wasm: evaluation failed: %w", err)
}

// describe turns an aborted guest call into its abort message.
func (inst *instance) describe(err error) error {
	if inst.aborted {
		return fmt.Errorf("policy aborted: %s", inst.abortMsg)
	}
	return err
}

// Host functions. They run on the goroutine that called into the guest.

func (inst *instance) hostAbort(_ context.Context, _ api.Module, stack []uint64) {
	msg := "(unreadable abort message)"
	if b, ok := inst.cString(uint32(stack[0])); ok {
		msg = string(b)
	}
	inst.aborted = true
	inst.abortMsg = msg
	panic(&abortError{msg: msg})
}

// hostPrintln serves opa_println, which only the C library's debug traces
// use; the output is discarded.
func (inst *instance) hostPrintln(context.Context, api.Module, []uint64) {}

func (inst *instance) hostBuiltin0(ctx context.Context, _ api.Module, stack []uint64) {
	if int32(uint32(stack[0])) == yieldID {
		inst.yield(ctx)
		stack[0] = 0
		return
	}
	inst.dispatch(ctx, stack, 0)
}

// yieldID is the builtin id with which the loop instrumentation calls
// opa_builtin0 every yieldInterval loop iterations (see internal/interrupt);
// OPA's builtin ids are never negative (-1 is used by the C library's
// import-forcing stub).
const (
	yieldID       = -2
	yieldInterval = 1 << 14
)

// regexMatchID is the builtin id with which the rewritten opa_regex_match
// calls opa_builtin2 (see internal/reroute and regexMatch).
const regexMatchID = -3

// yield stops the evaluation when its context is done. Being a call into
// Go, it is also a safe point for the Go scheduler and garbage collector,
// which cannot preempt native Wasm code.
func (inst *instance) yield(ctx context.Context) {
	if ctx.Err() != nil {
		inst.interrupted = true
		panic(&interruptError{})
	}
}

type interruptError struct{}

func (*interruptError) Error() string { return "evaluation interrupted" }

func (inst *instance) hostBuiltin1(ctx context.Context, _ api.Module, stack []uint64) {
	inst.dispatch(ctx, stack, 1)
}

func (inst *instance) hostBuiltin2(ctx context.Context, _ api.Module, stack []uint64) {
	if int32(uint32(stack[0])) == regexMatchID && inst.p.regexes != nil {
		inst.regexMatch(ctx, stack)
		return
	}
	inst.dispatch(ctx, stack, 2)
}

func (inst *instance) hostBuiltin3(ctx context.Context, _ api.Module, stack []uint64) {
	inst.dispatch(ctx, stack, 3)
}

func (inst *instance) hostBuiltin4(ctx context.Context, _ api.Module, stack []uint64) {
	inst.dispatch(ctx, stack, 4)
}

// dispatch serves opa_builtinN(id, ctx, a1..aN): the arguments are value
// addresses, read with opa_value_dump and given to the builtin as JSON or
// as Rego value text (see BuiltinFunc and ValueBuiltinFunc); the result is
// parsed back into a guest value, with opa_json_parse or opa_value_parse,
// whose address is returned (0 = undefined).
//
// ctx is the context of the wazero call, i.e. the one passed to Eval.
func (inst *instance) dispatch(ctx context.Context, stack []uint64, nargs int) {
	id := int32(uint32(stack[0]))
	var addrs [4]uint32
	for i := range nargs {
		addrs[i] = uint32(stack[2+i])
	}
	b, ok := inst.p.builtin(id)
	if !ok {
		inst.aborted = true
		inst.abortMsg = fmt.Sprintf("unknown builtin id %d", id)
		panic(&abortError{msg: inst.abortMsg})
	}
	args := make([][]byte, nargs)
	for i := range nargs {
		var text []byte
		var err error
		if inst.p.direct {
			text, err = inst.printValue(ctx, &inst.argPrinter, addrs[i])
			if err == nil && inst.p.cfg.checkLayout {
				err = inst.checkPrinted(ctx, text, addrs[i])
			}
		} else {
			text, err = inst.dump(ctx, inst.fnValueDump, addrs[i])
		}
		if err != nil {
			panic(&hostCallError{err: err})
		}
		if b.json != nil {
			if out, rest, ok := appendPlainJSON(nil, text, 0); ok && len(skipWS(rest)) == 0 {
				args[i] = out
				continue
			}
		}
		v, err := readValue(text)
		if err != nil {
			panic(&hostCallError{err: err})
		}
		if b.value != nil {
			args[i] = appendRego(nil, &v)
		} else {
			args[i] = appendJSON(nil, &v)
		}
	}
	var addr uint32
	var err error
	if b.value != nil {
		addr, err = inst.valueResult(ctx, callValueBuiltin(ctx, b.value, args))
	} else {
		addr, err = inst.jsonResult(ctx, callBuiltin(ctx, b.json, args))
	}
	if err != nil {
		panic(&hostCallError{err: err})
	}
	stack[0] = uint64(addr)
}

// jsonResult parses a BuiltinFunc's result in the guest (0: undefined).
func (inst *instance) jsonResult(ctx context.Context, res []byte) (uint32, error) {
	ok, needsSanitize := validJSON(res, maxResultDepth)
	if !ok {
		return 0, nil // nil or not JSON: undefined
	}
	if needsSanitize {
		res = sanitize(res)
	}
	return inst.parseJSON(ctx, res)
}

// valueResult parses a ValueBuiltinFunc's result in the guest (0:
// undefined). Numbers the guest cannot read (.5) are written out again.
func (inst *instance) valueResult(ctx context.Context, res []byte) (uint32, error) {
	if res == nil {
		return 0, nil
	}
	p := valueParser{b: res, maxDepth: maxResultDepth}
	v, err := p.parse()
	if err != nil {
		return 0, nil // not a Rego value: undefined
	}
	if p.rewrote {
		res = appendRego(nil, &v)
	}
	if needsSanitizeText(res) {
		res = sanitize(res)
	}
	return inst.parseRegoText(ctx, res)
}

// callValueBuiltin runs a ValueBuiltinFunc; errors and panics yield
// undefined (nil), as for callBuiltin.
func callValueBuiltin(ctx context.Context, fn ValueBuiltinFunc, args [][]byte) (res []byte) {
	defer func() {
		if recover() != nil {
			res = nil
		}
	}()
	r, err := fn(ctx, args)
	if err != nil {
		return nil
	}
	return r
}

// callBuiltin runs a BuiltinFunc; errors and panics yield undefined (nil),
// as in OPA's non-strict Wasm evaluation.
func callBuiltin(ctx context.Context, fn BuiltinFunc, args [][]byte) (res json.RawMessage) {
	defer func() {
		if recover() != nil {
			res = nil
		}
	}()
	jargs := make([]json.RawMessage, len(args))
	for i, a := range args {
		jargs[i] = a
	}
	r, err := fn(ctx, jargs)
	if err != nil {
		return nil
	}
	return r
}
