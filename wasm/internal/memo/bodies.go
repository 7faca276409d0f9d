package memo

import "github.com/aclc-dev/aclc/wasm/internal/leb128"

// Opcodes of the instructions the new bodies use.
const (
	opBlock     = 0x02
	opLoop      = 0x03
	opIf        = 0x04
	opEnd       = 0x0b
	opBr        = 0x0c
	opBrIf      = 0x0d
	opReturn    = 0x0f
	opCall      = 0x10
	opLocalGet  = 0x20
	opLocalSet  = 0x21
	opLocalTee  = 0x22
	opGlobalGet = 0x23
	opGlobalSet = 0x24
	opI32Load   = 0x28
	opI64Load   = 0x29
	opI32Store  = 0x36
	opI64Store  = 0x37
	opI32Const  = 0x41
	opI64Const  = 0x42
	opI32Eqz    = 0x45
	opI32Eq     = 0x46
	opI32Ne     = 0x47
	opI32LtU    = 0x49
	opI32GeU    = 0x4f
	opI32Add    = 0x6a
	opI32Shl    = 0x74

	blockEmpty = 0x40
)

// globalIndices are the globals Rewrite adds, all mutable i32:
//   - table: address of the table (set by the host; 0 = none);
//   - cur: the stamp of the current frame;
//   - next: the last stamp handed out;
//   - frame: the current frame record (0 = the frame init opened);
//   - undo: the head of the log of overwritten slots.
//
// A frame record, allocated by push, holds the stamp, frame and undo of
// the enclosing frame at offsets 0, 4 and 8. A log entry holds the next
// entry at 0, the slot's address at 4 and the slot's former stamp and
// value at 8 and 12. A slot holds a stamp at 0 and a value at 4.
type globalIndices struct {
	table, cur, next, frame, undo uint32
}

// code assembles a function body.
type code []byte

func (c code) op(ops ...byte) code { return append(c, ops...) }

func (c code) idx(op byte, i uint32) code { return leb128.AppendUint32(append(c, op), i) }

func (c code) i32(v int32) code { return leb128.AppendInt32(append(c, opI32Const), v) }

// mem appends a load or store with an alignment hint of 4 bytes.
func (c code) mem(op byte, offset uint32) code {
	return leb128.AppendUint32(append(c, op, 2), offset)
}

// body prefixes the instructions with n i32 locals and ends them.
func body(locals uint32, instrs code) []byte {
	out := []byte{0}
	if locals > 0 {
		out = leb128.AppendUint32([]byte{1}, locals)
		out = append(out, 0x7f)
	}
	out = append(out, instrs...)
	return append(out, opEnd)
}

// slotAddr leaves table + index*8 on the stack, for the index in local 0.
func (c code) slotAddr(g globalIndices) code {
	return c.idx(opGlobalGet, g.table).idx(opLocalGet, 0).i32(3).op(opI32Shl, opI32Add)
}

// skipUnlessSlot branches out of the enclosing block when local 0 is no
// index of the table or there is no table.
func (c code) skipUnlessSlot(g globalIndices, nfuncs uint32) code {
	return c.idx(opLocalGet, 0).i32(int32(nfuncs)).op(opI32GeU).idx(opBrIf, 0).
		idx(opGlobalGet, g.table).op(opI32Eqz).idx(opBrIf, 0)
}

// getBody: opa_memoize_get(index) returns the slot's value if the current
// frame wrote it, else 0.
func getBody(g globalIndices, nfuncs uint32) []byte {
	const slot = 1
	c := code{}.op(opBlock, blockEmpty).
		skipUnlessSlot(g, nfuncs).
		slotAddr(g).idx(opLocalTee, slot).
		mem(opI32Load, 0).idx(opGlobalGet, g.cur).op(opI32Ne).idx(opBrIf, 0).
		idx(opLocalGet, slot).mem(opI32Load, 4).op(opReturn).
		op(opEnd).
		i32(0)
	return body(1, c)
}

// insertBody: opa_memoize_insert(index, value) stores the value in the
// slot with the current stamp; within a pushed frame it first logs what the
// slot held, unless the current frame wrote it.
func insertBody(g globalIndices, nfuncs, malloc uint32) []byte {
	const value, slot, entry = 1, 2, 3
	c := code{}.op(opBlock, blockEmpty).
		skipUnlessSlot(g, nfuncs).
		slotAddr(g).idx(opLocalSet, slot).
		idx(opGlobalGet, g.frame).op(opIf, blockEmpty).
		idx(opLocalGet, slot).mem(opI32Load, 0).idx(opGlobalGet, g.cur).op(opI32Ne).op(opIf, blockEmpty).
		i32(16).idx(opCall, malloc).idx(opLocalTee, entry).
		idx(opGlobalGet, g.undo).mem(opI32Store, 0).
		idx(opLocalGet, entry).idx(opLocalGet, slot).mem(opI32Store, 4).
		idx(opLocalGet, entry).idx(opLocalGet, slot).mem(opI64Load, 0).mem(opI64Store, 8).
		idx(opLocalGet, entry).idx(opGlobalSet, g.undo).
		op(opEnd).
		op(opEnd).
		idx(opLocalGet, slot).idx(opGlobalGet, g.cur).mem(opI32Store, 0).
		idx(opLocalGet, slot).idx(opLocalGet, value).mem(opI32Store, 4).
		op(opEnd)
	return body(2, c)
}

// initBody: opa_memoize_init() opens a frame with a fresh stamp and
// forgets the frame records and log of the previous evaluation (their
// memory went with the heap reset). Past stampLimit it first clears the
// table and restarts the counter.
func initBody(g globalIndices, nfuncs uint32) []byte {
	const p, end = 0, 1
	c := code{}.idx(opGlobalGet, g.next).i32(int32(stampLimit)).op(opI32GeU).op(opIf, blockEmpty).
		idx(opGlobalGet, g.table).op(opIf, blockEmpty).
		idx(opGlobalGet, g.table).idx(opLocalTee, p).i32(int32(nfuncs*slotBytes)).op(opI32Add).idx(opLocalSet, end).
		op(opLoop, blockEmpty).
		idx(opLocalGet, p).op(opI64Const, 0).mem(opI64Store, 0).
		idx(opLocalGet, p).i32(slotBytes).op(opI32Add).idx(opLocalTee, p).
		idx(opLocalGet, end).op(opI32LtU).idx(opBrIf, 0).
		op(opEnd).
		op(opEnd).
		i32(0).idx(opGlobalSet, g.next).
		op(opEnd).
		nextStamp(g).
		i32(0).idx(opGlobalSet, g.frame).
		i32(0).idx(opGlobalSet, g.undo)
	return body(2, c)
}

// nextStamp makes a fresh stamp the current one.
func (c code) nextStamp(g globalIndices) code {
	return c.idx(opGlobalGet, g.next).i32(1).op(opI32Add).idx(opGlobalSet, g.next).
		idx(opGlobalGet, g.next).idx(opGlobalSet, g.cur)
}

// pushBody: opa_memoize_push() saves the current frame in a record and
// opens an empty one with a fresh stamp.
func pushBody(g globalIndices, malloc uint32) []byte {
	const rec = 0
	c := code{}.i32(16).idx(opCall, malloc).idx(opLocalTee, rec).
		idx(opGlobalGet, g.cur).mem(opI32Store, 0).
		idx(opLocalGet, rec).idx(opGlobalGet, g.frame).mem(opI32Store, 4).
		idx(opLocalGet, rec).idx(opGlobalGet, g.undo).mem(opI32Store, 8).
		idx(opLocalGet, rec).idx(opGlobalSet, g.frame).
		nextStamp(g)
	return body(1, c)
}

// popBody: opa_memoize_pop() puts back the slots the frame overwrote,
// newest first, and restores the enclosing frame. A pop without a push
// does nothing.
func popBody(g globalIndices) []byte {
	const rec, mark, entry = 0, 1, 2
	c := code{}.op(opBlock, blockEmpty).
		idx(opGlobalGet, g.frame).idx(opLocalTee, rec).op(opI32Eqz).idx(opBrIf, 0).
		idx(opLocalGet, rec).mem(opI32Load, 8).idx(opLocalSet, mark).
		op(opBlock, blockEmpty).op(opLoop, blockEmpty).
		idx(opGlobalGet, g.undo).idx(opLocalTee, entry).idx(opLocalGet, mark).op(opI32Eq).idx(opBrIf, 1).
		idx(opLocalGet, entry).op(opI32Eqz).idx(opBrIf, 1).
		idx(opLocalGet, entry).mem(opI32Load, 4).
		idx(opLocalGet, entry).mem(opI64Load, 8).
		mem(opI64Store, 0).
		idx(opLocalGet, entry).mem(opI32Load, 0).idx(opGlobalSet, g.undo).
		idx(opBr, 0).
		op(opEnd).op(opEnd).
		idx(opLocalGet, rec).mem(opI32Load, 0).idx(opGlobalSet, g.cur).
		idx(opLocalGet, rec).mem(opI32Load, 4).idx(opGlobalSet, g.frame).
		op(opEnd)
	return body(3, c)
}
