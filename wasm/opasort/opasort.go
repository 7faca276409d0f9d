// Package opasort gives the C library of OPA-compiled WebAssembly modules a
// sort that takes O(n log n) comparisons.
//
// OPA's C library sorts arrays with an insertion sort (opa_array_sort), and
// the builtin sort (opa_agg_sort) feeds it the elements of a set in hash
// order, so sorting n elements takes about n²/4 comparisons: sorting the
// keys of a Pod's 40,000 annotations takes over ten seconds, long past an
// admission webhook's deadline. Rewrite replaces the body of opa_array_sort
// with a stable bottom-up merge sort that calls the same comparison
// function, so every caller of the function (the sort builtin first of all)
// gets the same order in n log n comparisons. The order is the one the
// insertion sort gives: both are stable, so even elements that compare
// equal but print differently (1 and 1.0) keep their relative order.
//
// aclc applies Rewrite when it compiles a Wasm bundle, so OPA's own Wasm
// runtimes, its SDKs and aclc's host all run the merge sort; aclc's host
// also applies it when it loads a module built elsewhere. A module without
// a function named opa_array_sort in its "name" section, or whose
// signatures differ from those of OPA's C library, is refused with an
// error; the caller then keeps the module as it is.
//
// See https://webassembly.github.io/spec/core/binary/index.html
package opasort

import (
	"errors"
	"fmt"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
	"github.com/aclc-dev/aclc/wasm/internal/wasmbin"
)

// Function names in OPA's C library.
const (
	arraySort = "opa_array_sort"
	malloc    = "opa_malloc"
	free      = "opa_free"
)

var (
	sortType    = wasmbin.FuncType{Params: "\x7f\x7f"}                  // (opa_array_t *, opa_compare_fn)
	compareType = wasmbin.FuncType{Params: "\x7f\x7f", Results: "\x7f"} // opa_compare_fn
	mallocType  = wasmbin.FuncType{Params: "\x7f", Results: "\x7f"}
	freeType    = wasmbin.FuncType{Params: "\x7f"}
)

// Rewrite returns a copy of module whose opa_array_sort is a merge sort;
// a module without one (OPA leaves it out of a policy that sorts nothing)
// is returned as it is.
func Rewrite(module []byte) ([]byte, error) {
	m, err := wasmbin.Parse(module)
	if err != nil {
		return nil, fmt.Errorf("opasort: %w", err)
	}
	if _, ok := m.Names[arraySort]; !ok {
		return module, nil
	}
	sortFn, err := m.Defined(arraySort, sortType)
	if err != nil {
		return nil, fmt.Errorf("opasort: %w", err)
	}
	mallocFn, err := m.Defined(malloc, mallocType)
	if err != nil {
		return nil, fmt.Errorf("opasort: %w", err)
	}
	freeFn, err := m.Defined(free, freeType)
	if err != nil {
		return nil, fmt.Errorf("opasort: %w", err)
	}
	cmpType := -1
	for i, t := range m.Types {
		if t == compareType {
			cmpType = i
			break
		}
	}
	if cmpType < 0 {
		return nil, errors.New("opasort: module has no type for opa_compare_fn")
	}
	body := mergeSort(uint32(cmpType), mallocFn, freeFn)
	out := make([]wasmbin.Section, 0, len(m.Sections))
	replaced := false
	for _, s := range m.Sections {
		if s.ID == wasmbin.SecCode {
			c, err := wasmbin.ReplaceBodies(s.Content, m.ImportedFuncs, map[uint32][]byte{sortFn: body})
			if err != nil {
				return nil, fmt.Errorf("opasort: %w", err)
			}
			s.Content, replaced = c, true
		}
		out = append(out, s)
	}
	if !replaced {
		return nil, errors.New("opasort: module has no code section")
	}
	return wasmbin.Encode(module, out), nil
}

// Opcodes used by the body.
const (
	opBlock        = 0x02
	opLoop         = 0x03
	opIf           = 0x04
	opElse         = 0x05
	opEnd          = 0x0b
	opBr           = 0x0c
	opBrIf         = 0x0d
	opReturn       = 0x0f
	opCall         = 0x10
	opCallIndirect = 0x11
	opSelect       = 0x1b
	opLocalGet     = 0x20
	opLocalSet     = 0x21
	opI32Load      = 0x28
	opI32Store     = 0x36
	opI32Const     = 0x41
	opI32LtS       = 0x48
	opI32LtU       = 0x49
	opI32GeU       = 0x4f
	opI32Add       = 0x6a
	opI32Shl       = 0x74
	blockVoid      = 0x40
	blockI32       = 0x7f
)

// Locals of the body: the two parameters, then i32 locals.
const (
	lArr   = iota // opa_array_t *
	lCmp          // opa_compare_fn (a table index)
	lN            // arr->len
	lElems        // arr->elems
	lSrc          // the run being merged from
	lTmp          // the run being merged into
	lWidth        // the length of the runs merged in this pass
	lI            // the start of the pair of runs being merged
	lMid          // the end of the first run
	lHi           // the end of the second run
	lA            // next of the first run
	lB            // next of the second run
	lK            // next slot written
	lT            // scratch
	numLocals
)

// opa_array_t in wasm32: the header byte, then elems at 4, len at 8;
// opa_array_elem_t is {i, v}, 8 bytes, the value at 4.
const (
	offElems = 4
	offLen   = 8
	elemSize = 3 // log2(8)
	offValue = 4
)

// asm is a tiny assembler for one function body.
type asm []byte

func (a *asm) op(b ...byte) *asm { *a = append(*a, b...); return a }
func (a *asm) get(l byte) *asm   { return a.op(opLocalGet, l) }
func (a *asm) set(l byte) *asm   { return a.op(opLocalSet, l) }
func (a *asm) i32(v int32) *asm {
	*a = leb128.AppendInt32(append(*a, opI32Const), v)
	return a
}
func (a *asm) call(fn uint32) *asm {
	*a = leb128.AppendUint32(append(*a, opCall), fn)
	return a
}

// load and store take alignment 2 (4 bytes) and an offset.
func (a *asm) load(off byte) *asm  { return a.op(opI32Load, 2, off) }
func (a *asm) store(off byte) *asm { return a.op(opI32Store, 2, off) }

// addr pushes base + idx<<shift.
func (a *asm) addr(base, idx byte, shift int32) *asm {
	return a.get(base).get(idx).i32(shift).op(opI32Shl, opI32Add)
}

// minN sets dst to min(local t, n), unsigned.
func (a *asm) minN(dst byte) *asm {
	return a.get(lT).get(lN).get(lT).get(lN).op(opI32LtU, opSelect).set(dst)
}

// mergeSort is the body of opa_array_sort(arr, cmp): copy the value
// pointers out, merge runs of width 1, 2, 4, ... between two buffers taking
// from the first run on ties (stable), and copy the result back. The
// elements' index fields stay where they are, as the insertion sort leaves
// them.
func mergeSort(cmpType, mallocFn, freeFn uint32) []byte {
	var a asm
	// Locals: one run of numLocals-2 i32s.
	a.op(1, numLocals-2, blockI32)

	a.get(lArr).load(offLen).set(lN)
	a.get(lN).i32(2).op(opI32LtU, opIf, blockVoid, opReturn, opEnd)
	a.get(lArr).load(offElems).set(lElems)
	a.get(lN).i32(2).op(opI32Shl).call(mallocFn).set(lSrc)
	a.get(lN).i32(2).op(opI32Shl).call(mallocFn).set(lTmp)

	// src[k] = elems[k].v
	a.i32(0).set(lK)
	a.op(opBlock, blockVoid, opLoop, blockVoid)
	a.get(lK).get(lN).op(opI32GeU, opBrIf, 1)
	a.addr(lSrc, lK, 2).addr(lElems, lK, elemSize).load(offValue).store(0)
	a.get(lK).i32(1).op(opI32Add).set(lK)
	a.op(opBr, 0, opEnd, opEnd)

	a.i32(1).set(lWidth)
	a.op(opBlock, blockVoid, opLoop, blockVoid) // passes
	a.get(lWidth).get(lN).op(opI32GeU, opBrIf, 1)
	a.i32(0).set(lI)
	a.op(opBlock, blockVoid, opLoop, blockVoid) // pairs of runs
	a.get(lI).get(lN).op(opI32GeU, opBrIf, 1)
	a.get(lI).get(lWidth).op(opI32Add).set(lT)
	a.minN(lMid)
	a.get(lMid).get(lWidth).op(opI32Add).set(lT)
	a.minN(lHi)
	a.get(lI).set(lA)
	a.get(lMid).set(lB)
	a.get(lI).set(lK)
	a.op(opBlock, blockVoid, opLoop, blockVoid) // one merge
	a.get(lK).get(lHi).op(opI32GeU, opBrIf, 1)
	// Take from the first run while it has elements and either the second
	// has none or cmp(first, second) <= 0.
	a.get(lA).get(lMid).op(opI32LtU, opIf, blockI32)
	{
		a.get(lB).get(lHi).op(opI32GeU, opIf, blockI32)
		a.i32(1)
		a.op(opElse)
		a.addr(lSrc, lA, 2).load(0).addr(lSrc, lB, 2).load(0).get(lCmp)
		a.op(opCallIndirect)
		a = asm(leb128.AppendUint32(a, cmpType))
		a.op(0x00) // table 0
		a.i32(1).op(opI32LtS)
		a.op(opEnd)
	}
	a.op(opElse).i32(0).op(opEnd)
	a.op(opIf, blockVoid)
	a.addr(lTmp, lK, 2).addr(lSrc, lA, 2).load(0).store(0)
	a.get(lA).i32(1).op(opI32Add).set(lA)
	a.op(opElse)
	a.addr(lTmp, lK, 2).addr(lSrc, lB, 2).load(0).store(0)
	a.get(lB).i32(1).op(opI32Add).set(lB)
	a.op(opEnd)
	a.get(lK).i32(1).op(opI32Add).set(lK)
	a.op(opBr, 0, opEnd, opEnd) // end of one merge
	a.get(lHi).set(lI)
	a.op(opBr, 0, opEnd, opEnd) // end of pairs
	a.get(lSrc).set(lT).get(lTmp).set(lSrc).get(lT).set(lTmp)
	a.get(lWidth).i32(1).op(opI32Shl).set(lWidth)
	a.op(opBr, 0, opEnd, opEnd) // end of passes

	// elems[k].v = src[k]
	a.i32(0).set(lK)
	a.op(opBlock, blockVoid, opLoop, blockVoid)
	a.get(lK).get(lN).op(opI32GeU, opBrIf, 1)
	a.addr(lElems, lK, elemSize).addr(lSrc, lK, 2).load(0).store(offValue)
	a.get(lK).i32(1).op(opI32Add).set(lK)
	a.op(opBr, 0, opEnd, opEnd)

	a.get(lSrc).call(freeFn)
	a.get(lTmp).call(freeFn)
	a.op(opEnd)
	return a
}
