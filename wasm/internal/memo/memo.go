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
var signatures = map[string]wasmbin.FuncType{
	fnInit:   {},
	fnPush:   {},
	fnPop:    {},
	fnInsert: {Params: "\x7f\x7f"},
	fnGet:    {Params: "\x7f", Results: "\x7f"},
	fnMalloc: {Params: "\x7f", Results: "\x7f"},
}

// stampLimit is the counter value past which init clears the table; see the
// package documentation. A variable so that tests can start near it.
var stampLimit uint32 = 1 << 31

// initialStamp is the counter's initial value; tests set it close to
// stampLimit.
var initialStamp uint32

type section = wasmbin.Section

// Rewrite returns a copy of module whose memoization functions use a flat
// table, and the size in bytes of the table the host must provide (see
// TableGlobal). It returns an error, and no module, when module is not an
// OPA-compiled module it can rewrite.
func Rewrite(module []byte) ([]byte, uint32, error) {
	m, err := wasmbin.Parse(module)
	if err != nil {
		return nil, 0, fmt.Errorf("memo: %w", err)
	}
	if _, ok := m.Exports[TableGlobal]; ok {
		return nil, 0, fmt.Errorf("memo: module already exports %q", TableGlobal)
	}
	nfuncs := m.NumFuncs()

	if hasName(m.Names, fnPush) != hasName(m.Names, fnPop) {
		return nil, 0, errors.New("memo: module names only one of opa_memoize_push and opa_memoize_pop")
	}
	fn := map[string]uint32{}
	for _, name := range []string{fnInit, fnPush, fnPop, fnInsert, fnGet, fnMalloc} {
		if !hasName(m.Names, name) && (name == fnPush || name == fnPop) {
			continue
		}
		var idx uint32
		var err error
		if name == fnMalloc {
			idx, err = m.ExportedFunc(name, signatures[name])
		} else {
			idx, err = m.Defined(name, signatures[name])
		}
		if err != nil {
			return nil, 0, fmt.Errorf("memo: %w", err)
		}
		fn[name] = idx
	}
	globals := m.Globals

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
	export := wasmbin.AppendName(nil, TableGlobal)
	export = append(export, 0x03) // global
	export = leb128.AppendUint32(export, g.table)

	out := make([]section, 0, len(m.Sections))
	seen := map[byte]bool{}
	for _, s := range m.Sections {
		seen[s.ID] = true
		var err error
		switch s.ID {
		case secGlobal:
			s.Content, err = wasmbin.AppendToVec(s.Content, 5, newGlobals)
		case secExport:
			s.Content, err = wasmbin.AppendToVec(s.Content, 1, export)
		case secCode:
			s.Content, err = wasmbin.ReplaceBodies(s.Content, m.ImportedFuncs, bodies)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("memo: %w", err)
		}
		out = append(out, s)
	}
	for _, id := range []byte{secGlobal, secExport, secCode} {
		if !seen[id] {
			return nil, 0, fmt.Errorf("memo: module has no section %d", id)
		}
	}
	res := wasmbin.Encode(module, out)
	return res, uint32(nfuncs) * slotBytes, nil
}

func hasName(names map[string]uint32, name string) bool {
	_, ok := names[name]
	return ok
}
