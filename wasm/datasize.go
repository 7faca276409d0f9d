package wasm

// dataPages returns how many 64 KiB pages the module's active data
// segments reach into, 0 when that cannot be read. OPA's compiler declares
// a memory minimum of 2 pages even when its data segments run past them
// (a policy with enough string constants); OPA's own SDKs start their
// memory at 5 pages or more and never notice. The host sizes the memory
// from the segments instead, so that any policy OPA compiles instantiates.
func dataPages(module []byte) uint32 {
	const wasmHeader = 8
	if len(module) < wasmHeader {
		return 0
	}
	r := byteReader{b: module, i: wasmHeader}
	for r.ok() {
		id := r.byte()
		size := r.u32()
		end := r.i + int(size)
		if r.bad || end > len(r.b) {
			return 0
		}
		if id != 11 { // the data section
			r.i = end
			continue
		}
		var top uint64
		for n := r.u32(); n > 0 && !r.bad; n-- {
			switch flags := r.u32(); flags {
			case 0: // active, memory 0, offset expression
				if r.byte() != 0x41 { // i32.const
					return 0
				}
				off := uint64(uint32(r.s32()))
				if r.byte() != 0x0b { // end
					return 0
				}
				l := uint64(r.u32())
				r.i += int(l)
				top = max(top, off+l)
			case 1: // passive: no place in memory
				r.i += int(r.u32())
			default:
				return 0
			}
		}
		if r.bad || r.i > end {
			return 0
		}
		return uint32((top + wasmPageSize - 1) / wasmPageSize)
	}
	return 0
}

type byteReader struct {
	b   []byte
	i   int
	bad bool
}

func (r *byteReader) ok() bool { return !r.bad && r.i < len(r.b) }

func (r *byteReader) byte() byte {
	if r.i >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *byteReader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

func (r *byteReader) s32() int32 {
	var v int64
	shift := 0
	for shift < 35 {
		c := r.byte()
		v |= int64(c&0x7f) << shift
		shift += 7
		if c < 0x80 {
			if c&0x40 != 0 && shift < 64 {
				v |= -1 << shift
			}
			return int32(v)
		}
	}
	r.bad = true
	return 0
}
