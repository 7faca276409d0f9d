// Package wasmbin reads the parts of the WebAssembly binary format that the
// host's module rewriters (interrupt, memo, reroute) need: bytes, LEB128 integers,
// names and limits, with the first error kept and every later read a no-op.
//
// See https://webassembly.github.io/spec/core/binary/index.html
package wasmbin

import (
	"errors"
	"strings"
)

// ErrTruncated is the error of a read past the end of the bytes.
var ErrTruncated = errors.New("truncated module")

// ErrLEB128 is the error of a LEB128 value longer than its type allows.
var ErrLEB128 = errors.New("malformed LEB128")

// Reader reads B from offset I. The first error is kept in Err; after it
// every read returns a zero value.
type Reader struct {
	B   []byte
	I   int
	Err error
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.I >= len(r.B) {
		r.Err = ErrTruncated
		return 0
	}
	c := r.B[r.I]
	r.I++
	return c
}

// Skip passes over n bytes.
func (r *Reader) Skip(n int) {
	if n < 0 || len(r.B)-r.I < n {
		r.Err = ErrTruncated
		r.I = len(r.B)
		return
	}
	r.I += n
}

// Bytes reads n bytes (a slice of B, not a copy).
func (r *Reader) Bytes(n uint32) []byte {
	if uint64(len(r.B)-r.I) < uint64(n) {
		r.Err = ErrTruncated
		r.I = len(r.B)
		return nil
	}
	s := r.B[r.I : r.I+int(n)]
	r.I += int(n)
	return s
}

// U32 reads an unsigned LEB128 value of at most 32 bits.
func (r *Reader) U32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.Byte()
		if r.Err != nil {
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.Err = ErrLEB128
	return 0
}

// LEB skips a signed or unsigned LEB128 value of up to 64 bits.
func (r *Reader) LEB() {
	for range 10 {
		c := r.Byte()
		if r.Err != nil || c&0x80 == 0 {
			return
		}
	}
	r.Err = ErrLEB128
}

// Name reads a name: its length, then its bytes.
func (r *Reader) Name() string {
	return string(r.Bytes(r.U32()))
}

// Limits skips the limits of a table or memory type: a flag byte, the
// minimum and, when the flag says so, the maximum.
func (r *Reader) Limits() {
	flags := r.Byte()
	r.LEB()
	if flags&0x01 != 0 {
		r.LEB()
	}
}

// Section is one section of a module: its id and its content.
type Section struct {
	ID      byte
	Content []byte
}

// Sections checks the module's header (WebAssembly 1.0 binary format) and
// splits it into its sections, in order. Custom sections named ".debug_*"
// (DWARF) are left out: they address code by byte offset, which a rewrite
// of the code shifts, and would mislead stack traces.
func Sections(module []byte) ([]Section, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" || string(module[4:8]) != "\x01\x00\x00\x00" {
		return nil, errors.New("not a WebAssembly 1.0 binary module")
	}
	r := &Reader{B: module, I: 8}
	var secs []Section
	for r.I < len(r.B) {
		id := r.Byte()
		size := r.U32()
		if r.Err != nil || uint64(r.I)+uint64(size) > uint64(len(r.B)) {
			return nil, errors.New("truncated section")
		}
		s := Section{ID: id, Content: r.B[r.I : r.I+int(size)]}
		r.I += int(size)
		if id == 0 {
			cr := &Reader{B: s.Content}
			if name := cr.Name(); cr.Err == nil && strings.HasPrefix(name, ".debug_") {
				continue
			}
		}
		secs = append(secs, s)
	}
	return secs, nil
}
