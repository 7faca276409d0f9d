// Package interrupt makes a WebAssembly module interruptible by its host
// at almost no cost.
//
// Instrument adds a mutable i32 countdown global and inserts at the head of
// every loop
//
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//	global.get $budget
//	i32.eqz
//	if
//	  i32.const <interval>
//	  global.set $budget
//	  i32.const <arg>... ;; Yield.Args
//	  call $yield        ;; an existing function import
//	  drop...            ;; its results
//	end
//
// so that the host's yield function runs every interval loop iterations. It
// can check for cancellation and trap (panic) to stop the code. Code without
// loops runs in bounded time (recursion is bounded by the stack), so every
// runaway computation reaches the host regularly.
//
// Calling into Go regularly matters beyond cancellation: native code
// compiled by wazero is not preemptible, so a guest that never returns to Go
// would also stall every stop-the-world phase of the Go garbage collector,
// and with it the whole process. A host call is a Go safe point.
//
// This replaces wazero's RuntimeConfig.WithCloseOnContextDone, whose
// compiled check leaves native code for Go at every loop iteration and whose
// Call spawns a goroutine per call; for small OPA policies that made an
// evaluation four to five times slower. The countdown costs a load, a store
// and a branch per iteration.
//
// The yield function must be an existing import because adding an import
// would renumber every function. Written from the WebAssembly 2.0 binary
// format specification. Modules with instructions this package does not
// decode (SIMD, threads, exception handling, GC) are refused with an error,
// so that the caller can fall back to another mechanism.
package interrupt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
	"github.com/aclc-dev/aclc/wasm/internal/wasmbin"
)

// Yield names the imported function the instrumented code calls every
// interval loop iterations, and the i32 constants it passes.
type Yield struct {
	Module, Name string
	Args         []int32
}

const (
	secType   = 1
	secImport = 2
	secGlobal = 6
	secCode   = 10
	secTag    = 13

	opBlock = 0x02
	opLoop  = 0x03
	opIf    = 0x04
	opEnd   = 0x0b
)

// sectionRank orders the known non-custom sections as the binary format
// requires.
var sectionRank = map[byte]int{
	1: 1, 2: 2, 3: 3, 4: 4, 5: 5, secTag: 6, secGlobal: 7, 7: 8,
	8: 9, 9: 10, 12: 11, secCode: 12, 11: 13,
}

type section = wasmbin.Section

// Instrument returns an instrumented copy of the module that calls the
// yield import every interval loop iterations; see the package
// documentation.
func Instrument(module []byte, yield Yield, interval uint32) ([]byte, error) {
	if interval == 0 || interval > 1<<30 {
		return nil, errors.New("interrupt: interval out of range")
	}
	m, err := wasmbin.Parse(module)
	if err != nil {
		return nil, fmt.Errorf("interrupt: %w", err)
	}
	secs := m.Sections
	yieldFunc, ok := m.FuncImports[yield.Module+"."+yield.Name]
	if !ok {
		return nil, fmt.Errorf("interrupt: module does not import function %s.%s", yield.Module, yield.Name)
	}
	yt, ok := m.TypeOf(yieldFunc)
	if !ok {
		return nil, errors.New("interrupt: import has an invalid type index")
	}
	if yt.Params != strings.Repeat("\x7f", len(yield.Args)) {
		return nil, fmt.Errorf("interrupt: %s.%s does not take %d i32 parameters", yield.Module, yield.Name, len(yield.Args))
	}
	g := m.Globals

	// The new global: mutable i32 initialised to interval.
	newGlobal := []byte{0x7f, 0x01, 0x41}
	newGlobal = leb128.AppendInt32(newGlobal, int32(interval))
	newGlobal = append(newGlobal, opEnd)

	var check []byte
	check = append(check, 0x23)
	check = leb128.AppendUint32(check, g)         // global.get
	check = append(check, 0x41, 0x01, 0x6b, 0x24) // i32.const 1; i32.sub; global.set
	check = leb128.AppendUint32(check, g)
	check = append(check, 0x23)
	check = leb128.AppendUint32(check, g)   // global.get
	check = append(check, 0x45, opIf, 0x40) // i32.eqz; if
	check = append(check, 0x41)
	check = leb128.AppendInt32(check, int32(interval)) // i32.const interval
	check = append(check, 0x24)
	check = leb128.AppendUint32(check, g) // global.set
	for _, a := range yield.Args {
		check = append(check, 0x41)
		check = leb128.AppendInt32(check, a)
	}
	check = append(check, 0x10)
	check = leb128.AppendUint32(check, uint32(yieldFunc)) // call
	for range len(yt.Results) {
		check = append(check, 0x1a) // drop
	}
	check = append(check, opEnd)

	var out []section
	hasGlobal, hasCode := false, false
	for _, s := range secs {
		switch s.ID {
		case secGlobal:
			hasGlobal = true
			s.Content = appendToVec(s.Content, newGlobal)
		case secCode:
			hasCode = true
			c, err := instrumentCode(s.Content, check)
			if err != nil {
				return nil, err
			}
			s.Content = c
		}
		out = append(out, s)
	}
	if !hasCode {
		return nil, errors.New("interrupt: module has no code section")
	}
	if !hasGlobal {
		out = insertSection(out, section{ID: secGlobal, Content: appendToVec(nil, newGlobal)})
	}

	res := make([]byte, 0, len(module)+len(module)/8)
	res = append(res, module[:8]...)
	for _, s := range out {
		res = append(res, s.ID)
		res = leb128.AppendUint32(res, uint32(len(s.Content)))
		res = append(res, s.Content...)
	}
	return res, nil
}

// appendToVec adds one encoded element to a vector (count followed by the
// elements); a nil vec is empty.
func appendToVec(vec, elem []byte) []byte {
	var n uint32
	rest := vec
	if len(vec) > 0 {
		r := newReader(vec, 0)
		n = r.U32()
		rest = vec[r.I:]
	}
	out := leb128.AppendUint32(nil, n+1)
	out = append(out, rest...)
	return append(out, elem...)
}

// insertSection inserts s before the first known section that must follow
// it.
func insertSection(secs []section, s section) []section {
	rank := sectionRank[s.ID]
	for i, x := range secs {
		if r, ok := sectionRank[x.ID]; ok && r > rank {
			return append(secs[:i:i], append([]section{s}, secs[i:]...)...)
		}
	}
	return append(secs, s)
}

// instrumentCode rewrites the code section, inserting check after the block
// type of every loop.
func instrumentCode(b []byte, check []byte) ([]byte, error) {
	r := newReader(b, 0)
	n := r.U32()
	out := leb128.AppendUint32(make([]byte, 0, len(b)+len(b)/8), n)
	var body []byte
	for f := range n {
		size := r.U32()
		if r.Err != nil || uint64(r.I)+uint64(size) > uint64(len(b)) {
			return nil, errors.New("interrupt: truncated code section")
		}
		var err error
		body, err = instrumentBody(body[:0], b[r.I:r.I+int(size)], check)
		if err != nil {
			return nil, fmt.Errorf("interrupt: function %d: %w", f, err)
		}
		r.I += int(size)
		out = leb128.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.Err != nil || r.I != len(b) {
		return nil, errors.New("interrupt: malformed code section")
	}
	return out, nil
}

func instrumentBody(out, body, check []byte) ([]byte, error) {
	r := newReader(body, 0)
	groups := r.U32()
	for range groups {
		r.U32()
		if t := r.Byte(); !isValType(t) {
			return nil, fmt.Errorf("unsupported local type %#x", t)
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	out = append(out, body[:r.I]...)
	for r.I < len(r.B) {
		start := r.I
		op := r.Byte()
		if err := r.skipImmediates(op); err != nil {
			return nil, err
		}
		if r.Err != nil {
			return nil, r.Err
		}
		out = append(out, body[start:r.I]...)
		if op == opLoop {
			out = append(out, check...)
		}
	}
	return out, nil
}

func isValType(t byte) bool {
	switch t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return true
	}
	return false
}

// skipImmediates advances past the immediates of op.
func (r *reader) skipImmediates(op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == opEnd || op == 0x0f ||
		op == 0x1a || op == 0x1b || op == 0xd1:
		// unreachable, nop, else, end, return, drop, select, ref.is_null
	case op == opBlock || op == opLoop || op == opIf:
		r.LEB() // block type: 0x40, a value type or an s33 type index
	case op == 0x0c || op == 0x0d: // br, br_if
		r.U32()
	case op == 0x0e: // br_table
		n := r.U32()
		for range n {
			r.U32()
		}
		r.U32()
	case op == 0x10: // call
		r.U32()
	case op == 0x11: // call_indirect
		r.U32()
		r.U32()
	case op == 0x1c: // select t*
		n := r.U32()
		for range n {
			r.Byte()
		}
	case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
		r.U32()
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		r.U32()
		r.U32()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.U32()
	case op == 0x41 || op == 0x42: // i32.const, i64.const
		r.LEB()
	case op == 0x43: // f32.const
		r.Skip(4)
	case op == 0x44: // f64.const
		r.Skip(8)
	case op >= 0x45 && op <= 0xc4: // numeric, conversions, sign extension
	case op == 0xd0: // ref.null
		r.Byte()
	case op == 0xd2: // ref.func
		r.U32()
	case op == 0xfc:
		switch sub := r.U32(); {
		case sub <= 7: // saturating truncations
		case sub == 8: // memory.init
			r.U32()
			r.U32()
		case sub == 9: // data.drop
			r.U32()
		case sub == 10: // memory.copy
			r.U32()
			r.U32()
		case sub == 11: // memory.fill
			r.U32()
		case sub == 12 || sub == 14: // table.init, table.copy
			r.U32()
			r.U32()
		case sub == 13 || (sub >= 15 && sub <= 17): // elem.drop, table.grow/size/fill
			r.U32()
		default:
			return fmt.Errorf("unsupported instruction 0xfc %d", sub)
		}
	default:
		return fmt.Errorf("unsupported instruction %#x", op)
	}
	return nil
}

// reader reads the module's bytes; see wasmbin.Reader.
type reader struct{ wasmbin.Reader }

func newReader(b []byte, i int) *reader { return &reader{wasmbin.Reader{B: b, I: i}} }
