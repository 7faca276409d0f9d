// Package memo replaces the rule memoization of OPA-compiled WebAssembly
// modules with a flat table indexed by function number.
//
// OPA's compiler memoizes every planned rule function: on entry it calls
// opa_memoize_get(index) and returns a non-zero result; before returning
// it calls opa_memoize_insert(index, value). index is the function's own
// index in the module. The eval function calls opa_memoize_init first, and
// each `with` statement brackets its body with opa_memoize_push and
// opa_memoize_pop, which open an empty frame and restore the previous one.
// OPA's C library keeps each frame in a generic object keyed by number
// values, which costs an allocation per insert and a hash per lookup.
//
// Rewrite gives those five functions new bodies over a table of one slot
// per function of the module (so every index the compiler can emit has a
// slot), each slot a pair (stamp, value):
//
//   - every frame gets a fresh stamp from a counter kept in a global, so
//     that a slot belongs to the current frame exactly when its stamp is
//     the current one, and opening a frame never clears the table;
//   - init starts a frame with a fresh stamp; push saves the current stamp
//     in a frame record and starts a fresh one;
//   - insert within a pushed frame first logs the slot's previous content,
//     unless the current frame wrote it already; pop replays that log back
//     to the mark the frame record holds, and restores the stamp, so the
//     outer frame sees exactly the entries it had.
//
// The table must survive the heap reset opa_eval performs at every
// evaluation, so the module does not allocate it: the host does, once, in
// the data region below the evaluation heap (see TableGlobal). Frame
// records and log entries are allocated with the module's opa_malloc in the
// evaluation heap, like OPA's own frames; init forgets them.
//
// Stamps are i32. A stamp is only compared with the current one, so a stale
// stamp never matches unless the counter wraps; init therefore clears the
// table and restarts the counter once it passes 2^31. Within one
// evaluation every push allocates a frame record, so the memory limit
// (4 GiB) bounds the stamps one evaluation takes to 2^28, well within the
// remaining half of the range.
//
// Written from the WebAssembly 2.0 binary format specification. Modules
// whose memoization functions cannot be found by the names of the "name"
// custom section, or whose signatures differ from those of OPA's C
// library, are refused with an error; the caller then keeps the module as
// it is.
//
// See https://webassembly.github.io/spec/core/binary/index.html
package memo

import (
	"errors"
	"fmt"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
	"github.com/aclc-dev/aclc/wasm/internal/wasmbin"
)

// TableGlobal is the name under which the rewritten module exports the
// mutable i32 global holding the table's address. The host allocates
// TableBytes bytes, zeroes them and sets the global before the first
// evaluation; while it is 0 the rewritten functions memoize nothing (every
// lookup misses), which is correct, only slower.
const TableGlobal = "aclc_memo_table"

const (
	secCustom = 0
	secType   = 1
	secImport = 2
	secFunc   = 3
	secGlobal = 6
	secExport = 7
	secCode   = 10

	slotBytes = 8 // stamp i32, value i32
)

// Names of the C library functions whose bodies are replaced.
const (
	fnInit   = "opa_memoize_init"
	fnPush   = "opa_memoize_push"
	fnPop    = "opa_memoize_pop"
	fnInsert = "opa_memoize_insert"
	fnGet    = "opa_memoize_get"
	fnMalloc = "opa_malloc"
)

// signatures are the expected types: parameter and result value types.
var signatures = map[string]funcType{
	fnInit:   {},
	fnPush:   {},
	fnPop:    {},
	fnInsert: {params: "\x7f\x7f"},
	fnGet:    {params: "\x7f", results: "\x7f"},
	fnMalloc: {params: "\x7f", results: "\x7f"},
}

// stampLimit is the counter value past which init clears the table; see the
// package documentation. A variable so that tests can start near it.
var stampLimit uint32 = 1 << 31

// initialStamp is the counter's initial value; tests set it close to
// stampLimit.
var initialStamp uint32

type section = wasmbin.Section

type funcType struct {
	params, results string // value type bytes
}

// Rewrite returns a copy of module whose memoization functions use a flat
// table, and the size in bytes of the table the host must provide (see
// TableGlobal). It returns an error, and no module, when module is not an
// OPA-compiled module it can rewrite.
func Rewrite(module []byte) ([]byte, uint32, error) {
	secs, err := wasmbin.Sections(module)
	if err != nil {
		return nil, 0, fmt.Errorf("memo: %w", err)
	}

	var (
		types                  []funcType
		funcTypes              []uint32 // type index of each defined function
		importedFuncs, globals uint32
		exports                = map[string]bool{}
		malloc                 = int64(-1)
		names                  map[string]uint32
	)
	for _, s := range secs {
		var err error
		switch s.ID {
		case secType:
			types, err = readTypes(s.Content)
		case secImport:
			importedFuncs, globals, err = countImports(s.Content)
		case secFunc:
			funcTypes, err = readFuncs(s.Content)
		case secGlobal:
			sr := newReader(s.Content, 0)
			globals += sr.U32()
			err = sr.Err
		case secExport:
			malloc, err = readExports(s.Content, exports)
		case secCustom:
			if customName(s.Content) == "name" {
				names, err = readFuncNames(s.Content)
			}
		}
		if err != nil {
			return nil, 0, err
		}
	}
	if exports[TableGlobal] {
		return nil, 0, fmt.Errorf("memo: module already exports %q", TableGlobal)
	}
	nfuncs := uint64(importedFuncs) + uint64(len(funcTypes))
	if nfuncs > 1<<24 {
		return nil, 0, errors.New("memo: too many functions")
	}

	// Find the functions and check their signatures. OPA's compiler
	// replaces the body of every function the policy cannot reach with
	// `unreachable` and drops its name: push and pop, which only `with`
	// statements call, are then nameless, and there is nothing to replace.
	// They come as a pair, or the frames would not nest.
	if hasName(names, fnPush) != hasName(names, fnPop) {
		return nil, 0, errors.New("memo: module names only one of opa_memoize_push and opa_memoize_pop")
	}
	fn := map[string]uint32{}
	for _, name := range []string{fnInit, fnPush, fnPop, fnInsert, fnGet, fnMalloc} {
		idx, ok := names[name]
		if name == fnMalloc {
			// The ABI exports opa_malloc; the name section need not agree.
			idx, ok = uint32(malloc), malloc >= 0
		}
		if !ok && (name == fnPush || name == fnPop) {
			continue
		}
		if !ok {
			return nil, 0, fmt.Errorf("memo: module has no function named %s", name)
		}
		if idx < importedFuncs || uint64(idx) >= nfuncs {
			return nil, 0, fmt.Errorf("memo: %s is not a function defined by the module", name)
		}
		t := funcTypes[idx-importedFuncs]
		if int(t) >= len(types) || types[t] != signatures[name] {
			return nil, 0, fmt.Errorf("memo: %s has an unexpected signature", name)
		}
		fn[name] = idx
	}

	g := globalIndices{table: globals, cur: globals + 1, next: globals + 2, frame: globals + 3, undo: globals + 4}
	bodies := map[uint32][]byte{
		fn[fnInit]:   initBody(g, uint32(nfuncs)),
		fn[fnInsert]: insertBody(g, uint32(nfuncs), fn[fnMalloc]),
		fn[fnGet]:    getBody(g, uint32(nfuncs)),
	}
	if idx, ok := fn[fnPush]; ok {
		bodies[idx] = pushBody(g, fn[fnMalloc])
		bodies[fn[fnPop]] = popBody(g)
	}
	if _, ok := bodies[fn[fnMalloc]]; ok || len(bodies) != len(fn)-1 {
		return nil, 0, errors.New("memo: two memoization functions share an index")
	}

	var newGlobals []byte
	for _, init := range []uint32{0, initialStamp, initialStamp, 0, 0} {
		newGlobals = append(newGlobals, 0x7f, 0x01, opI32Const) // mutable i32
		newGlobals = leb128.AppendInt32(newGlobals, int32(init))
		newGlobals = append(newGlobals, opEnd)
	}
	export := appendName(nil, TableGlobal)
	export = append(export, 0x03) // global
	export = leb128.AppendUint32(export, g.table)

	out := make([]section, 0, len(secs))
	seen := map[byte]bool{}
	for _, s := range secs {
		seen[s.ID] = true
		var err error
		switch s.ID {
		case secGlobal:
			s.Content, err = appendToVec(s.Content, 5, newGlobals)
		case secExport:
			s.Content, err = appendToVec(s.Content, 1, export)
		case secCode:
			s.Content, err = replaceBodies(s.Content, importedFuncs, bodies)
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	for _, id := range []byte{secGlobal, secExport, secCode} {
		if !seen[id] {
			// OPA modules have all three; inserting the missing ones is
			// not worth its code.
			return nil, 0, fmt.Errorf("memo: module has no section %d", id)
		}
	}

	res := make([]byte, 0, len(module)+len(newGlobals)+64)
	res = append(res, module[:8]...)
	for _, s := range out {
		res = append(res, s.ID)
		res = leb128.AppendUint32(res, uint32(len(s.Content)))
		res = append(res, s.Content...)
	}
	return res, uint32(nfuncs) * slotBytes, nil
}

func hasName(names map[string]uint32, name string) bool {
	_, ok := names[name]
	return ok
}

// customName returns the name of a custom section ("" if malformed).
func customName(content []byte) string {
	r := newReader(content, 0)
	return r.Name()
}

func readTypes(b []byte) ([]funcType, error) {
	r := newReader(b, 0)
	n := r.U32()
	types := make([]funcType, 0, min(n, 1<<16))
	for range n {
		if form := r.Byte(); form != 0x60 {
			return nil, fmt.Errorf("memo: unsupported type form %#x", form)
		}
		var ft funcType
		ft.params = r.valTypes()
		ft.results = r.valTypes()
		if r.Err != nil {
			return nil, r.Err
		}
		types = append(types, ft)
	}
	return types, r.Err
}

// countImports counts the imported functions and globals, which come first
// in their index spaces.
func countImports(b []byte) (funcs, globals uint32, err error) {
	r := newReader(b, 0)
	n := r.U32()
	for range n {
		r.Name()
		r.Name()
		switch kind := r.Byte(); kind {
		case 0x00: // func
			r.U32()
			funcs++
		case 0x01: // table
			r.Byte()
			r.Limits()
		case 0x02: // memory
			r.Limits()
		case 0x03: // global
			r.Byte()
			r.Byte()
			globals++
		case 0x04: // tag
			r.Byte()
			r.U32()
		default:
			return 0, 0, fmt.Errorf("memo: unknown import kind %#x", kind)
		}
		if r.Err != nil {
			return 0, 0, r.Err
		}
	}
	return funcs, globals, r.Err
}

func readFuncs(b []byte) ([]uint32, error) {
	r := newReader(b, 0)
	n := r.U32()
	out := make([]uint32, 0, min(n, 1<<16))
	for range n {
		out = append(out, r.U32())
		if r.Err != nil {
			return nil, r.Err
		}
	}
	return out, r.Err
}

// readExports records the export names and returns the index of the
// exported function opa_malloc (-1 if absent).
func readExports(b []byte, names map[string]bool) (malloc int64, err error) {
	r := newReader(b, 0)
	n := r.U32()
	malloc = -1
	for range n {
		name := r.Name()
		kind := r.Byte()
		idx := r.U32()
		if r.Err != nil {
			return 0, r.Err
		}
		names[name] = true
		if kind == 0x00 && name == fnMalloc {
			malloc = int64(idx)
		}
	}
	return malloc, r.Err
}

// readFuncNames reads the function names subsection of the name section.
// A name given to two functions is dropped: it identifies neither.
func readFuncNames(content []byte) (map[string]uint32, error) {
	r := newReader(content, 0)
	r.Name()
	for r.I < len(r.B) && r.Err == nil {
		id := r.Byte()
		size := r.U32()
		if r.Err != nil || uint64(r.I)+uint64(size) > uint64(len(r.B)) {
			return nil, errors.New("memo: malformed name section")
		}
		sub := newReader(r.B[r.I:r.I+int(size)], 0)
		r.I += int(size)
		if id != 1 {
			continue
		}
		names := map[string]uint32{}
		dup := map[string]bool{}
		n := sub.U32()
		for range n {
			idx := sub.U32()
			name := sub.Name()
			if sub.Err != nil {
				return nil, errors.New("memo: malformed name section")
			}
			if _, ok := names[name]; ok {
				dup[name] = true
			}
			names[name] = idx
		}
		for name := range dup {
			delete(names, name)
		}
		return names, nil
	}
	if r.Err != nil {
		return nil, errors.New("memo: malformed name section")
	}
	return nil, nil
}

// appendToVec adds n encoded elements to a vector (count, then elements).
func appendToVec(vec []byte, n uint32, elems []byte) ([]byte, error) {
	r := newReader(vec, 0)
	count := r.U32()
	if r.Err != nil {
		return nil, r.Err
	}
	out := leb128.AppendUint32(nil, count+n)
	out = append(out, vec[r.I:]...)
	return append(out, elems...), nil
}

// replaceBodies rewrites the code section, replacing the bodies of the
// functions in bodies (by function index) and copying the others.
func replaceBodies(b []byte, importedFuncs uint32, bodies map[uint32][]byte) ([]byte, error) {
	r := newReader(b, 0)
	n := r.U32()
	out := leb128.AppendUint32(make([]byte, 0, len(b)+256), n)
	replaced := 0
	for i := range n {
		size := r.U32()
		if r.Err != nil || uint64(r.I)+uint64(size) > uint64(len(b)) {
			return nil, errors.New("memo: truncated code section")
		}
		body, ok := bodies[importedFuncs+i]
		if ok {
			replaced++
		} else {
			body = b[r.I : r.I+int(size)]
		}
		r.I += int(size)
		out = leb128.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.Err != nil || r.I != len(b) {
		return nil, errors.New("memo: malformed code section")
	}
	if replaced != len(bodies) {
		return nil, errors.New("memo: code section does not match the function section")
	}
	return out, nil
}

// reader reads the module's bytes; see wasmbin.Reader.
type reader struct{ wasmbin.Reader }

func newReader(b []byte, i int) *reader { return &reader{wasmbin.Reader{B: b, I: i}} }

// valTypes reads a vector of value types; types beyond WebAssembly 2.0
// (which take more than a byte) are refused.
func (r *reader) valTypes() string {
	t := r.Bytes(r.U32())
	for _, c := range t {
		switch c {
		case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		default:
			r.Err = fmt.Errorf("memo: unsupported value type %#x", c)
			return ""
		}
	}
	return string(t)
}

func appendName(out []byte, s string) []byte {
	out = leb128.AppendUint32(out, uint32(len(s)))
	return append(out, s...)
}
