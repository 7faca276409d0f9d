package wasm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file moves values across the host boundary in the memory layout of
// OPA's C library (value.h, wasm32) instead of in text: the host writes the
// input document into guest memory as the values opa_value_parse would
// build from its JSON, and reads the result set out of guest memory as
// opa_value_dump would print it. The guest then neither lexes the input
// nor prints the result, which were most of the guest's work for a small
// decision (see "direct" in instance.go).
//
// The layout is the C library's, byte for byte where the guest reads it:
//
//	value     type byte at 0 (1 null, 2 boolean, 3 number, 4 string,
//	          5 array, 6 object, 7 set; 8 and 9 the compiler's interned
//	          strings and booleans)
//	boolean   value byte at 1
//	number    repr byte at 1 (1 int, 2 text); int64 at 8, or the text's
//	          address at 8, its length at 12, an "owned" byte at 16
//	string    "owned" byte at 1, length at 4, address of the bytes at 8
//	array     address of the elements at 4, length at 8, capacity at 12;
//	          an element is (index value, value), the index an int number
//	object    address of the buckets at 4, bucket count at 8, length at 12;
//	          a bucket is a chain of (key, value, next), sorted by key
//	set       as an object, with chains of (value, next)
//
// An object's bucket of key k is hash(k) mod the bucket count, the hash of
// a string FNV-1 (multiply, then xor) over its bytes from 0x811c9dc5; the
// bucket count starts at 8 and doubles when an insert would take the
// length above 0.7 of it. Iteration, and so the order of an object's keys
// in the result, follows the buckets, so the host must reproduce them
// exactly: the load-time check (checkLayout) and the tests compare what the
// host writes with what the guest's own parser builds, field by field.
//
// Every value the host writes sits in a block with the header of the C
// library's allocator (size, and two free-list links left zero), sized as
// opa_malloc sizes it, so that the guest's allocator could take it back as
// one of its own.

const (
	typeNull           = 1
	typeBoolean        = 2
	typeNumber         = 3
	typeString         = 4
	typeArray          = 5
	typeObject         = 6
	typeSet            = 7
	typeStringInterned = 8
	typeBoolInterned   = 9

	reprInt = 1
	reprRef = 2

	blockHeader  = 12 // struct heap_block: size, prev, next
	numberSize   = 24
	stringSize   = 12
	collSize     = 16 // array, object, set
	arrayElem    = 8
	objectElem   = 12
	setElem      = 8
	firstArrCap  = 10
	firstBuckets = 8
	loadFactor   = 0.7

	fnvInit  = 0x811c9dc5
	fnvPrime = 0x01000193

	// evalCtxSize is opa_eval_ctx_t: input, data, result, entrypoint.
	evalCtxSize = 16
)

// errLayout is returned when a value cannot be moved in the C library's
// layout; the caller falls back to the guest's parser and printer.
var errLayout = errors.New("value outside the layout the host writes and reads")

// blockSize is the size opa_malloc gives a request of n bytes: the fixed
// size classes of 4, 8, 16 and 64 bytes, else n.
func blockSize(n uint32) uint32 {
	for _, c := range [...]uint32{4, 8, 16, 64} {
		if n <= c {
			return c
		}
	}
	return n
}

// stringHash is the C library's hash of a string's bytes.
func stringHash(b []byte) uint32 {
	h := uint32(fnvInit)
	for _, c := range b {
		h *= fnvPrime
		h ^= uint32(c)
	}
	return h
}

// bucketCount is the number of buckets of an object or set into which n
// distinct keys were inserted one by one.
func bucketCount(n int) uint32 {
	b := uint32(firstBuckets)
	for i := 1; i <= n; i++ {
		if !(float64(i) <= float64(b)*loadFactor) {
			b *= 2
		}
	}
	return b
}

// inputWriter lays out the parsed values of a JSON document as the guest's
// allocator would, in buf, which is written into guest memory at base.
type inputWriter struct {
	base uint32
	buf  []byte
	// bools are the addresses of the module's interned false and true,
	// which its parser returns for every boolean (0: the writer allocates
	// booleans).
	bools [2]uint32
	// members is scratch space for the members of the objects being
	// written, reused across objects and evaluations.
	members []member
	scratch []byte
	tails   []uint32
}

type member struct {
	key  uint32 // offset in buf of the key's bytes
	n    uint32 // length of the key
	kval uint32 // address of the key's string value
	val  uint32
}

// reset starts a layout at base. buf is kept zero past its length, so
// that alloc need not clear every block: one clear here instead.
func (w *inputWriter) reset(base uint32) {
	w.base = base
	clear(w.buf)
	w.buf = w.buf[:0]
	w.members = w.members[:0]
}

// reserve makes room for the layout of a document of n bytes of text,
// which takes a few times its size, so that alloc rarely grows buf; the
// room an outsized input took is given back at the next small one.
func (w *inputWriter) reserve(n int) {
	need := 8*n + 256
	if c := cap(w.buf); c < need || c > max(4*need, 1<<20) {
		w.buf = make([]byte, 0, need) // zero
	}
}

// end is the address just past the last block written.
func (w *inputWriter) end() uint32 { return w.base + uint32(len(w.buf)) }

// alloc appends a block for n bytes and returns the address of its data.
func (w *inputWriter) alloc(n uint32) uint32 {
	size := blockSize(n)
	off := len(w.buf)
	end := off + blockHeader + int(size)
	if end > cap(w.buf) {
		w.buf = slices.Grow(w.buf, end-off) // zero past the length
	}
	w.buf = w.buf[:end]
	binary.LittleEndian.PutUint32(w.buf[off:], size)
	return w.base + uint32(off) + blockHeader
}

func (w *inputWriter) at(addr uint32) []byte { return w.buf[addr-w.base:] }

func (w *inputWriter) putU32(addr, v uint32) {
	binary.LittleEndian.PutUint32(w.buf[addr-w.base:], v)
}

// evalCtx writes an opa_eval_ctx_t for input, data and entrypoint.
func (w *inputWriter) evalCtx(input, data uint32, entrypoint int32) uint32 {
	a := w.alloc(evalCtxSize)
	w.putU32(a, input)
	w.putU32(a+4, data)
	w.putU32(a+12, uint32(entrypoint))
	return a
}

// document writes the JSON document text (valid, and sanitized: see
// checkInput) and returns the address of its value.
func (w *inputWriter) document(text []byte) (uint32, error) {
	w.reserve(len(text))
	p := jsonReader{b: text}
	p.ws()
	addr, err := w.value(&p)
	if err != nil {
		return 0, err
	}
	p.ws()
	if p.i != len(p.b) {
		return 0, errLayout
	}
	return addr, nil
}

// jsonReader walks JSON text that checkInput has accepted.
type jsonReader struct {
	b []byte
	i int
}

func (p *jsonReader) ws() { p.i = skipSpace(p.b, p.i) }

// next reads what follows an element of a collection that close ends: true
// after a comma, false after close.
func (p *jsonReader) next(close byte) (bool, error) {
	p.ws()
	if p.i >= len(p.b) {
		return false, errLayout
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return true, nil
	case close:
		p.i++
		return false, nil
	}
	return false, errLayout
}

func (w *inputWriter) value(p *jsonReader) (uint32, error) {
	if p.i >= len(p.b) {
		return 0, errLayout
	}
	switch c := p.b[p.i]; {
	case c == '"':
		s, err := w.readString(p)
		if err != nil {
			return 0, err
		}
		return w.stringValue(s), nil
	case c == '[':
		return w.array(p)
	case c == '{':
		return w.object(p)
	case c == 'n':
		p.i += len("null")
		a := w.alloc(1)
		w.at(a)[0] = typeNull
		return a, nil
	case c == 't' || c == 'f':
		if i := b2i(c == 't'); w.bools[i] != 0 {
			p.i += len("false") - i
			return w.bools[i], nil
		}
		a := w.alloc(2)
		b := w.at(a)
		b[0] = typeBoolean
		if c == 't' {
			b[1] = 1
			p.i += len("true")
		} else {
			p.i += len("false")
		}
		return a, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.b) && isNumberByte(p.b[p.i]) {
			p.i++
		}
		text := p.b[start:p.i]
		s := w.alloc(uint32(len(text)))
		copy(w.at(s), text)
		a := w.alloc(numberSize)
		b := w.at(a)
		b[0], b[1] = typeNumber, reprRef
		binary.LittleEndian.PutUint32(b[8:], s)
		binary.LittleEndian.PutUint32(b[12:], uint32(len(text)))
		b[16] = 1
		return a, nil
	}
	return 0, errLayout
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// readString decodes the string at p (a view of the text when it has no
// escapes, else of w.scratch, valid until the next string).
func (w *inputWriter) readString(p *jsonReader) ([]byte, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.b) && p.b[p.i] != '"' && p.b[p.i] != '\\' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '"' {
		p.i++
		return p.b[start : p.i-1], nil
	}
	out := append(w.scratch[:0], p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			w.scratch = out
			return out, nil
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return nil, errLayout
		}
		esc := p.b[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hexUnit(p.b, p.i)
			if !ok {
				return nil, errLayout
			}
			p.i += 4
			if utf16.IsSurrogate(r) {
				// The sanitized input has only pairs; the guest
				// combines them as UTF-16 does.
				if p.i+6 > len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return nil, errLayout
				}
				r2, ok := hexUnit(p.b, p.i+2)
				if !ok {
					return nil, errLayout
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return nil, errLayout
				}
				p.i += 6
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errLayout
		}
	}
	return nil, errLayout
}

func hexUnit(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}

// stringValue writes a string value holding a copy of s.
func (w *inputWriter) stringValue(s []byte) uint32 {
	n := uint32(len(s))
	data := w.alloc(n)
	copy(w.at(data), s)
	a := w.alloc(stringSize)
	b := w.at(a)
	b[0], b[1] = typeString, 1
	binary.LittleEndian.PutUint32(b[4:], n)
	binary.LittleEndian.PutUint32(b[8:], data)
	return a
}

func (w *inputWriter) array(p *jsonReader) (uint32, error) {
	p.i++ // [
	var elems []uint32
	p.ws()
	if p.i >= len(p.b) {
		return 0, errLayout
	}
	if p.b[p.i] == ']' {
		p.i++
	} else {
		for {
			p.ws()
			v, err := w.value(p)
			if err != nil {
				return 0, err
			}
			elems = append(elems, v)
			more, err := p.next(']')
			if err != nil {
				return 0, err
			}
			if more {
				continue
			}
			break
		}
	}
	a := w.alloc(collSize)
	w.at(a)[0] = typeArray
	if len(elems) == 0 {
		return a, nil
	}
	capacity := uint32(firstArrCap)
	for capacity < uint32(len(elems)) {
		capacity *= 2
	}
	es := w.alloc(capacity * arrayElem)
	for i, v := range elems {
		idx := w.alloc(numberSize)
		b := w.at(idx)
		b[0], b[1] = typeNumber, reprInt
		binary.LittleEndian.PutUint64(b[8:], uint64(i))
		w.putU32(es+uint32(i)*arrayElem, idx)
		w.putU32(es+uint32(i)*arrayElem+4, v)
	}
	b := w.at(a)
	binary.LittleEndian.PutUint32(b[4:], es)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(elems)))
	binary.LittleEndian.PutUint32(b[12:], capacity)
	return a, nil
}

func (w *inputWriter) object(p *jsonReader) (uint32, error) {
	p.i++ // {
	first := len(w.members)
	p.ws()
	if p.i >= len(p.b) {
		return 0, errLayout
	}
	if p.b[p.i] == '}' {
		p.i++
	} else {
		for {
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return 0, errLayout
			}
			k, err := w.readString(p)
			if err != nil {
				return 0, err
			}
			kval := w.stringValue(k)
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return 0, errLayout
			}
			p.i++
			p.ws()
			v, err := w.value(p)
			if err != nil {
				return 0, err
			}
			kb := w.at(kval)
			w.members = append(w.members, member{key: binary.LittleEndian.Uint32(kb[8:]) - w.base, n: binary.LittleEndian.Uint32(kb[4:]), kval: kval, val: v})
			more, err := p.next('}')
			if err != nil {
				return 0, err
			}
			if more {
				continue
			}
			break
		}
	}
	ms := w.members[first:]
	a := w.objectValue(ms)
	w.members = w.members[:first]
	return a, nil
}

// keyBytes is the bytes of a member's key, in buf.
func (w *inputWriter) keyBytes(m member) []byte { return w.buf[m.key : m.key+m.n] }

// objectValue writes an object of the members in the order the text gives
// them: each bucket's chain sorted by key, as the C library keeps it, and a
// key given twice with its first string and its last value, as
// opa_object_insert leaves it.
func (w *inputWriter) objectValue(ms []member) uint32 {
	// Keys are inserted in ascending order, each at the end of its chain;
	// the stable sort keeps the members of one key in the text's order.
	slices.SortStableFunc(ms, func(x, y member) int { return bytes.Compare(w.keyBytes(x), w.keyBytes(y)) })
	distinct := ms[:0]
	for i, m := range ms {
		if i > 0 && bytes.Equal(w.keyBytes(m), w.keyBytes(distinct[len(distinct)-1])) {
			distinct[len(distinct)-1].val = m.val
			continue
		}
		distinct = append(distinct, m)
	}
	ms = distinct
	n := bucketCount(len(ms))
	a := w.alloc(collSize)
	buckets := w.alloc(n * 4)
	w.tails = append(w.tails[:0], make([]uint32, n)...) // address of the last link of each chain
	tails := w.tails
	for _, m := range ms {
		h := stringHash(w.keyBytes(m)) % n
		e := w.alloc(objectElem)
		w.putU32(e, m.kval)
		w.putU32(e+4, m.val)
		if tails[h] == 0 {
			w.putU32(buckets+h*4, e)
		} else {
			w.putU32(tails[h]+8, e)
		}
		tails[h] = e
	}
	b := w.at(a)
	b[0] = typeObject
	binary.LittleEndian.PutUint32(b[4:], buckets)
	binary.LittleEndian.PutUint32(b[8:], n)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(ms)))
	return a
}

// valuePrinter prints guest values as opa_value_dump does: Rego value text
// with ", " and ": " separators, sets as set literals (set() when empty),
// object keys of any type, members in the order of the buckets, integers
// in decimal and numbers from text as their text.
//
// With json set it prints the same value as compact JSON instead, as
// plainResult turns that text into JSON, and fails where plainResult
// would: on a set, a key that is not a string or a number whose text is
// not JSON's.
type valuePrinter struct {
	mem  []byte
	out  []byte
	json bool
}

// separators returns the item and key separators of the printer's form.
func (pr *valuePrinter) separators() (item, key string) {
	if pr.json {
		return ",", ":"
	}
	return ", ", ": "
}

// jsonNumber tells whether text, a number's text, is a JSON number.
func jsonNumber(text []byte) bool {
	p := valueParser{b: text}
	_, ok := p.number()
	return ok && !p.rewrote && p.i == len(text)
}

func (pr *valuePrinter) u32(addr uint32) (uint32, bool) {
	if uint64(addr)+4 > uint64(len(pr.mem)) {
		return 0, false
	}
	return binary.LittleEndian.Uint32(pr.mem[addr:]), true
}

func (pr *valuePrinter) bytesAt(addr, n uint32) ([]byte, bool) {
	if uint64(addr)+uint64(n) > uint64(len(pr.mem)) {
		return nil, false
	}
	return pr.mem[addr : addr+n], true
}

// print appends the text of the value at addr; false when the memory does
// not hold a value of the layout.
func (pr *valuePrinter) print(addr uint32, depth int) bool {
	if addr == 0 || uint64(addr) >= uint64(len(pr.mem)) || depth > maxResultDepth {
		return false
	}
	switch pr.mem[addr] {
	case typeNull:
		pr.out = append(pr.out, "null"...)
	case typeBoolean, typeBoolInterned:
		if uint64(addr)+2 > uint64(len(pr.mem)) {
			return false
		}
		if pr.mem[addr+1] == 0 {
			pr.out = append(pr.out, "false"...)
		} else {
			pr.out = append(pr.out, "true"...)
		}
	case typeNumber:
		hdr, ok := pr.bytesAt(addr, 17)
		if !ok {
			return false
		}
		switch hdr[1] {
		case reprInt:
			pr.out = strconv.AppendInt(pr.out, int64(binary.LittleEndian.Uint64(hdr[8:])), 10)
		case reprRef:
			text, ok := pr.bytesAt(binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[12:]))
			if !ok || pr.json && !jsonNumber(text) {
				return false
			}
			pr.out = append(pr.out, text...)
		default:
			return false
		}
	case typeString, typeStringInterned:
		hdr, ok := pr.bytesAt(addr, stringSize)
		if !ok {
			return false
		}
		s, ok := pr.bytesAt(binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[4:]))
		if !ok {
			return false
		}
		pr.str(s)
	case typeArray:
		hdr, ok := pr.bytesAt(addr, collSize)
		if !ok {
			return false
		}
		es, n := binary.LittleEndian.Uint32(hdr[4:]), binary.LittleEndian.Uint32(hdr[8:])
		sep, _ := pr.separators()
		pr.out = append(pr.out, '[')
		for i := range n {
			if i > 0 {
				pr.out = append(pr.out, sep...)
			}
			v, ok := pr.u32(es + i*arrayElem + 4)
			if !ok || !pr.print(v, depth+1) {
				return false
			}
		}
		pr.out = append(pr.out, ']')
	case typeObject, typeSet:
		return pr.collection(addr, depth)
	default:
		return false
	}
	return true
}

// resultValue returns the address of the value of a result set as the
// compiled entrypoints return it, a set of one object {"result": value};
// false for any other value.
func (pr *valuePrinter) resultValue(addr uint32) (uint32, bool) {
	only := func(addr uint32, typ byte) (uint32, bool) {
		hdr, ok := pr.bytesAt(addr, collSize)
		if !ok || hdr[0] != typ || binary.LittleEndian.Uint32(hdr[12:]) != 1 {
			return 0, false
		}
		buckets, n := binary.LittleEndian.Uint32(hdr[4:]), binary.LittleEndian.Uint32(hdr[8:])
		for b := range n {
			e, ok := pr.u32(buckets + b*4)
			if !ok {
				return 0, false
			}
			if e != 0 {
				return e, true
			}
		}
		return 0, false
	}
	e, ok := only(addr, typeSet)
	if !ok {
		return 0, false
	}
	obj, ok := pr.u32(e)
	if !ok {
		return 0, false
	}
	if e, ok = only(obj, typeObject); !ok {
		return 0, false
	}
	k, ok := pr.u32(e)
	if !ok || uint64(k) >= uint64(len(pr.mem)) || pr.mem[k] != typeString && pr.mem[k] != typeStringInterned {
		return 0, false
	}
	hdr, ok := pr.bytesAt(k, stringSize)
	if !ok {
		return 0, false
	}
	if key, ok := pr.bytesAt(binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[4:])); !ok || string(key) != "result" {
		return 0, false
	}
	return pr.u32(e + 4)
}

// collection prints an object or a set, bucket by bucket.
func (pr *valuePrinter) collection(addr uint32, depth int) bool {
	hdr, ok := pr.bytesAt(addr, collSize)
	if !ok {
		return false
	}
	isSet := hdr[0] == typeSet
	if isSet && pr.json {
		return false
	}
	sep, keySep := pr.separators()
	buckets, n, length := binary.LittleEndian.Uint32(hdr[4:]), binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[12:])
	if isSet && length == 0 {
		pr.out = append(pr.out, "set()"...)
		return true
	}
	next := uint32(8) // offset of the link in an object element
	if isSet {
		next = 4
	}
	pr.out = append(pr.out, '{')
	seen := uint32(0)
	for b := range n {
		e, ok := pr.u32(buckets + b*4)
		if !ok {
			return false
		}
		for ; e != 0; e, ok = pr.u32(e + next) {
			if !ok || seen >= length {
				return false
			}
			if seen > 0 {
				pr.out = append(pr.out, sep...)
			}
			seen++
			k, ok := pr.u32(e)
			if !ok || pr.json && (uint64(k) >= uint64(len(pr.mem)) || pr.mem[k] != typeString && pr.mem[k] != typeStringInterned) || !pr.print(k, depth+1) {
				return false
			}
			if !isSet {
				v, ok := pr.u32(e + 4)
				if !ok {
					return false
				}
				pr.out = append(pr.out, keySep...)
				if !pr.print(v, depth+1) {
					return false
				}
			}
		}
	}
	if seen != length {
		return false
	}
	pr.out = append(pr.out, '}')
	return true
}

// str prints a string as the C library's JSON writer does: bytes below
// 0x20 other than \n, \r and \t as \u00xx, " and \ escaped, everything
// else as it is.
func (pr *valuePrinter) str(s []byte) {
	const hex = "0123456789abcdef"
	pr.out = append(pr.out, '"')
	for len(s) > 0 {
		// The bytes written as they are, in one copy.
		i := 0
		for i < len(s) && jsonPlain[s[i]] {
			i++
		}
		pr.out = append(pr.out, s[:i]...)
		if i == len(s) {
			break
		}
		c := s[i]
		s = s[i+1:]
		switch {
		case c == '\\' || c == '"':
			pr.out = append(pr.out, '\\', c)
		case c == '\n':
			pr.out = append(pr.out, '\\', 'n')
		case c == '\r':
			pr.out = append(pr.out, '\\', 'r')
		case c == '\t':
			pr.out = append(pr.out, '\\', 't')
		default:
			pr.out = append(pr.out, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
	}
	pr.out = append(pr.out, '"')
}

// sameValue tells whether the values at a and b of mem have the same
// layout in every field the guest reads: types, number representations and
// text, string bytes, array elements and their indexes, bucket counts and
// the order of every chain. The host's input is checked against the
// guest's parse of the same text with it.
func sameValue(mem []byte, a, b uint32, depth int) bool {
	pa, pb := valuePrinter{mem: mem}, valuePrinter{mem: mem}
	if a == 0 || b == 0 || int(a) >= len(mem) || int(b) >= len(mem) || depth > maxResultDepth {
		return a == b
	}
	ta, tb := mem[a], mem[b]
	if ta != tb {
		return false
	}
	u32 := func(p valuePrinter, x uint32) uint32 { v, _ := p.u32(x); return v }
	switch ta {
	case typeNull:
		return true
	case typeBoolean, typeBoolInterned:
		return mem[a+1] == mem[b+1]
	case typeNumber, typeString:
		// Same type, representation, flags and printed text.
		if mem[a+1] != mem[b+1] {
			return false
		}
		if ta == typeNumber && mem[a+1] == reprRef && mem[a+16] != mem[b+16] {
			return false
		}
		return pa.print(a, 0) && pb.print(b, 0) && bytes.Equal(pa.out, pb.out)
	case typeArray:
		n := u32(pa, a+8)
		if n != u32(pb, b+8) || u32(pa, a+12) != u32(pb, b+12) {
			return false
		}
		ea, eb := u32(pa, a+4), u32(pb, b+4)
		for i := range n {
			if !sameValue(mem, u32(pa, ea+i*arrayElem), u32(pb, eb+i*arrayElem), depth+1) ||
				!sameValue(mem, u32(pa, ea+i*arrayElem+4), u32(pb, eb+i*arrayElem+4), depth+1) {
				return false
			}
		}
		return true
	case typeObject, typeSet:
		n := u32(pa, a+8)
		if n != u32(pb, b+8) || u32(pa, a+12) != u32(pb, b+12) {
			return false
		}
		next := uint32(8)
		if ta == typeSet {
			next = 4
		}
		ba, bb := u32(pa, a+4), u32(pb, b+4)
		for i := range n {
			ea, eb := u32(pa, ba+i*4), u32(pb, bb+i*4)
			for steps := 0; ea != 0 && eb != 0; steps++ {
				if steps > len(mem) || !sameValue(mem, u32(pa, ea), u32(pb, eb), depth+1) {
					return false
				}
				if ta == typeObject && !sameValue(mem, u32(pa, ea+4), u32(pb, eb+4), depth+1) {
					return false
				}
				ea, eb = u32(pa, ea+next), u32(pb, eb+next)
			}
			if ea != eb {
				return false
			}
		}
		return true
	}
	return false
}
