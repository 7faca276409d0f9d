package wasm

import "testing"

// TestDataPagesReachPastTheDeclaredMinimum pins how the host sizes memory
// from the data section: OPA may declare 2 pages while its data segments
// run into a third.
func TestDataPagesReachPastTheDeclaredMinimum(t *testing.T) {
	seg := func(offset []byte, n int) []byte {
		out := append([]byte{0x00, 0x41}, offset...) // active, i32.const
		out = append(out, 0x0b, byte(n&0x7f|0x80), byte(n>>7))
		return append(out, make([]byte, n)...)
	}
	// Offsets as signed LEB128: 65536 and 131000.
	body := append([]byte{0x02}, seg([]byte{0x80, 0x80, 0x04}, 300)...)
	body = append(body, seg([]byte{0xb8, 0xff, 0x07}, 2000)...)
	module := append([]byte("\x00asm\x01\x00\x00\x00"), 0x0b)
	module = append(module, byte(len(body)&0x7f|0x80), byte(len(body)>>7))
	module = append(module, body...)
	if got := dataPages(module); got != 3 {
		t.Errorf("dataPages = %d, want 3 (131000 + 2000 bytes)", got)
	}
	if got := dataPages([]byte("\x00asm\x01\x00\x00\x00")); got != 0 {
		t.Errorf("no data section: %d", got)
	}
	if got := dataPages(module[:len(module)-10]); got != 0 {
		t.Errorf("a truncated section: %d", got)
	}
}
