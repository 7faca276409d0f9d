// Package leb128 encodes the variable-length integers of the WebAssembly
// binary format.
//
// See https://webassembly.github.io/spec/core/binary/values.html#integers
package leb128

// AppendUint32 appends v as unsigned LEB128.
func AppendUint32(out []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}

// AppendInt32 appends v as signed LEB128.
func AppendInt32(out []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}
