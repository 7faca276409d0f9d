package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
)

// This file reads and writes Rego values in text: JSON, plus what JSON
// cannot say, as OPA's C library prints values with opa_value_dump and
// reads them with opa_value_parse:
//
//   - sets, {1, 2}, and the empty set, set();
//   - object keys that are not strings, {1: "a", [1]: "b"};
//   - numbers as Rego writes them: .5 and -.5 for 0.5 and -0.5. A number
//     literal keeps its source text in the compiled module, and the C
//     library prints that text as it is.
//
// The host reads every value that leaves the guest with opa_value_dump
// into a tree and writes it out canonically: sets sorted in the order of
// OPA's ast.Compare, numbers as JSON numbers. In JSON, a set becomes its
// sorted array and a key that is not a string the string of its JSON, as
// OPA's ast.JSON does; in Rego text both stay what they are.

// kind is the type of a value, ordered as OPA's ast.Compare orders types.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
	kindSet
)

// value is a parsed Rego value.
type value struct {
	kind kind
	// raw is the literal of a null, boolean or number (a number as a JSON
	// number), and the text between the quotes of a string, escapes as
	// written.
	raw []byte
	// elems are the elements of an array or set, and the keys and values
	// of an object, alternating.
	elems []value
}

var errValueSyntax = errors.New("not a Rego value")

// valueParser parses Rego value text.
type valueParser struct {
	b        []byte
	i        int
	maxDepth int
	tooDeep  bool
	// rewrote is set when a number was not written as JSON (.5), so that
	// the text the guest reads must be written out again.
	rewrote bool
}

// parseValue parses b, one Rego value with optional surrounding white
// space, nested at most maxDepth levels.
func parseValue(b []byte, maxDepth int) (value, error) {
	p := valueParser{b: b, maxDepth: maxDepth}
	v, err := p.parse()
	return v, err
}

func (p *valueParser) parse() (value, error) {
	p.ws()
	v, ok := p.value(0)
	if !ok {
		return value{}, p.err()
	}
	p.ws()
	if p.i != len(p.b) {
		return value{}, p.err()
	}
	return v, nil
}

func (p *valueParser) err() error {
	if p.tooDeep {
		return fmt.Errorf("nested deeper than %d levels", p.maxDepth)
	}
	if p.i >= len(p.b) {
		return fmt.Errorf("%w: unexpected end", errValueSyntax)
	}
	return fmt.Errorf("%w: unexpected %q at offset %d", errValueSyntax, p.b[p.i], p.i)
}

func (p *valueParser) ws() { p.i = skipSpace(p.b, p.i) }

// skipSpace is the index of the first byte of b at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *valueParser) lit(s string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

func (p *valueParser) value(depth int) (value, bool) {
	if p.i >= len(p.b) {
		return value{}, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.str()
	case c == '-' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '[':
		return p.array(depth + 1)
	case c == '{':
		return p.objectOrSet(depth + 1)
	case p.lit("null"):
		return value{kind: kindNull, raw: litNull}, true
	case p.lit("true"):
		return value{kind: kindBool, raw: litTrue}, true
	case p.lit("false"):
		return value{kind: kindBool, raw: litFalse}, true
	case p.lit("set()"):
		return value{kind: kindSet}, true
	}
	return value{}, false
}

var (
	litNull  = []byte("null")
	litTrue  = []byte("true")
	litFalse = []byte("false")
)

// str reads a string with JSON's escapes; bytes of 0x80 and above are
// taken as they are (see sanitize for how inputs are cleaned).
func (p *valueParser) str() (value, bool) {
	start := p.i + 1
	for i := start; i < len(p.b); i++ {
		if jsonPlain[p.b[i]] {
			continue
		}
		switch c := p.b[i]; {
		case c == '"':
			p.i = i + 1
			return value{kind: kindString, raw: p.b[start:i]}, true
		case c == '\\':
			if i+1 >= len(p.b) {
				return value{}, false
			}
			switch p.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(p.b) || !isHex4(p.b[i+2:i+6]) {
					return value{}, false
				}
				i += 5
			default:
				p.i = i
				return value{}, false
			}
		case c < 0x20:
			p.i = i
			return value{}, false
		}
	}
	p.i = len(p.b)
	return value{}, false
}

// jsonPlain marks the bytes a JSON string holds as they are: not a
// control character, a quote or a backslash.
var jsonPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= ' ' && c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a number as Rego writes it: JSON's grammar, except that
// the integer part may be left out before a fraction (.5). The value
// keeps the JSON form (0.5).
func (p *valueParser) number() (value, bool) {
	start := p.i
	b := p.b
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	intStart := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	intDigits := i - intStart
	if intDigits > 1 && b[intStart] == '0' {
		p.i = intStart
		return value{}, false
	}
	fracDigits := 0
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if fracDigits = i - fs; fracDigits == 0 {
			p.i = i
			return value{}, false
		}
	}
	if intDigits == 0 && fracDigits == 0 {
		p.i = i
		return value{}, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		es := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == es {
			p.i = i
			return value{}, false
		}
	}
	p.i = i
	raw := b[start:i]
	if intDigits == 0 {
		// .5 → 0.5, -.5 → -0.5
		fixed := make([]byte, 0, len(raw)+1)
		fixed = append(fixed, b[start:intStart]...)
		fixed = append(fixed, '0')
		fixed = append(fixed, b[intStart:i]...)
		raw = fixed
		p.rewrote = true
	}
	return value{kind: kindNumber, raw: raw}, true
}

func (p *valueParser) array(depth int) (value, bool) {
	if depth > p.maxDepth {
		p.tooDeep = true
		return value{}, false
	}
	p.i++ // [
	p.ws()
	v := value{kind: kindArray}
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return v, true
	}
	for {
		p.ws()
		e, ok := p.value(depth)
		if !ok {
			return value{}, false
		}
		v.elems = append(v.elems, e)
		p.ws()
		if p.i >= len(p.b) {
			return value{}, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v, true
		default:
			return value{}, false
		}
	}
}

// objectOrSet reads {} (the empty object), {k: v, ...} or {e, ...} (a
// set): the first separator tells them apart, as in opa_value_parse.
func (p *valueParser) objectOrSet(depth int) (value, bool) {
	if depth > p.maxDepth {
		p.tooDeep = true
		return value{}, false
	}
	p.i++ // {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return value{kind: kindObject}, true
	}
	first, ok := p.value(depth)
	if !ok {
		return value{}, false
	}
	p.ws()
	if p.i >= len(p.b) {
		return value{}, false
	}
	v := value{kind: kindSet, elems: []value{first}}
	if p.b[p.i] == ':' {
		v.kind = kindObject
	}
	for {
		p.ws()
		if p.i >= len(p.b) {
			return value{}, false
		}
		if v.kind == kindObject {
			if p.b[p.i] != ':' {
				return value{}, false
			}
			p.i++
			p.ws()
			e, ok := p.value(depth)
			if !ok {
				return value{}, false
			}
			v.elems = append(v.elems, e)
			p.ws()
			if p.i >= len(p.b) {
				return value{}, false
			}
		}
		switch p.b[p.i] {
		case '}':
			p.i++
			return v, true
		case ',':
			p.i++
		default:
			return value{}, false
		}
		p.ws()
		e, ok := p.value(depth)
		if !ok {
			return value{}, false
		}
		v.elems = append(v.elems, e)
	}
}

// canonicalize sorts the elements of every set in v, in place, in the
// order of OPA's ast.Compare, and keeps the first of elements that are
// equal (1 and 1.0 are), as a set does. The module never prints a set
// with equal elements; text from elsewhere may have them.
func canonicalize(v *value) {
	for i := range v.elems {
		canonicalize(&v.elems[i])
	}
	if v.kind == kindSet {
		slices.SortStableFunc(v.elems, compareValues)
		v.elems = slices.CompactFunc(v.elems, func(a, b value) bool { return compareValues(a, b) == 0 })
	}
}

// appendJSON writes v as JSON: sets as arrays (in their order in v; see
// canonicalize), keys that are not strings as the string of their JSON.
func appendJSON(out []byte, v *value) []byte {
	switch v.kind {
	case kindString:
		out = append(out, '"')
		out = append(out, v.raw...)
		return append(out, '"')
	case kindArray, kindSet:
		out = append(out, '[')
		for i := range v.elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendJSON(out, &v.elems[i])
		}
		return append(out, ']')
	case kindObject:
		out = append(out, '{')
		for i := 0; i+1 < len(v.elems); i += 2 {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendKey(out, &v.elems[i])
			out = append(out, ':')
			out = appendJSON(out, &v.elems[i+1])
		}
		return append(out, '}')
	}
	return append(out, v.raw...)
}

// appendKey writes an object key as a JSON string: a string as it is,
// any other value as OPA's ast.JSON stringifies it, the compact JSON of
// the value by encoding/json (objects with sorted keys, HTML characters
// escaped).
func appendKey(out []byte, k *value) []byte {
	if k.kind == kindString {
		return appendJSON(out, k)
	}
	b, err := json.Marshal(k.native())
	if err != nil { // unreachable: numbers are valid JSON
		b = k.raw
	}
	s, _ := json.Marshal(string(b))
	return append(out, s...)
}

// native returns v as encoding/json would decode it (numbers as
// json.Number), sets as arrays.
func (v *value) native() any {
	switch v.kind {
	case kindNull:
		return nil
	case kindBool:
		return v.raw[0] == 't'
	case kindNumber:
		return json.Number(v.raw)
	case kindString:
		return v.str()
	case kindArray, kindSet:
		a := make([]any, len(v.elems))
		for i := range v.elems {
			a[i] = v.elems[i].native()
		}
		return a
	}
	m := make(map[string]any, len(v.elems)/2)
	for i := 0; i+1 < len(v.elems); i += 2 {
		k := &v.elems[i]
		var key string
		if k.kind == kindString {
			key = k.str()
		} else {
			key = string(appendKey(nil, k))
			key, _ = strconv.Unquote(key)
		}
		m[key] = v.elems[i+1].native()
	}
	return m
}

// appendRego writes v in Rego's syntax, spaced as OPA prints terms:
// sets as set literals (set() when empty), keys as the values they are.
func appendRego(out []byte, v *value) []byte {
	switch v.kind {
	case kindString:
		out = append(out, '"')
		out = append(out, v.raw...)
		return append(out, '"')
	case kindArray:
		out = append(out, '[')
		for i := range v.elems {
			if i > 0 {
				out = append(out, ", "...)
			}
			out = appendRego(out, &v.elems[i])
		}
		return append(out, ']')
	case kindSet:
		if len(v.elems) == 0 {
			return append(out, "set()"...)
		}
		out = append(out, '{')
		for i := range v.elems {
			if i > 0 {
				out = append(out, ", "...)
			}
			out = appendRego(out, &v.elems[i])
		}
		return append(out, '}')
	case kindObject:
		out = append(out, '{')
		for i := 0; i+1 < len(v.elems); i += 2 {
			if i > 0 {
				out = append(out, ", "...)
			}
			out = appendRego(out, &v.elems[i])
			out = append(out, ": "...)
			out = appendRego(out, &v.elems[i+1])
		}
		return append(out, '}')
	}
	return append(out, v.raw...)
}

// str decodes a string value.
func (v *value) str() string {
	if bytes.IndexByte(v.raw, '\\') < 0 {
		return string(v.raw)
	}
	var s string
	q := make([]byte, 0, len(v.raw)+2)
	q = append(append(append(q, '"'), v.raw...), '"')
	if err := json.Unmarshal(q, &s); err != nil {
		return string(v.raw)
	}
	return s
}

// compareValues orders values as OPA's ast.Compare does: by type (null,
// boolean, number, string, array, object, set), then numbers by value,
// strings by bytes, arrays and sets element by element (sets sorted) and
// then by length, objects by their (key, value) pairs in key order and
// then by length.
func compareValues(a, b value) int {
	if a.kind != b.kind {
		return int(a.kind) - int(b.kind)
	}
	switch a.kind {
	case kindNull:
		return 0
	case kindBool:
		return cmpBool(a.raw[0] == 't', b.raw[0] == 't')
	case kindNumber:
		return compareNumbers(string(a.raw), string(b.raw))
	case kindString:
		if bytes.IndexByte(a.raw, '\\') < 0 && bytes.IndexByte(b.raw, '\\') < 0 {
			return bytes.Compare(a.raw, b.raw)
		}
		as, bs := a.str(), b.str()
		switch {
		case as < bs:
			return -1
		case as > bs:
			return 1
		}
		return 0
	case kindArray, kindSet:
		// Sets are canonicalized before they are compared.
		return slices.CompareFunc(a.elems, b.elems, compareValues)
	}
	ak, bk := sortedPairs(a), sortedPairs(b)
	for i := range min(len(ak), len(bk)) {
		if c := compareValues(a.elems[ak[i]], b.elems[bk[i]]); c != 0 {
			return c
		}
		if c := compareValues(a.elems[ak[i]+1], b.elems[bk[i]+1]); c != 0 {
			return c
		}
	}
	return len(ak) - len(bk)
}

// sortedPairs returns the indexes of an object's keys in elems, in key
// order.
func sortedPairs(o value) []int {
	idx := make([]int, 0, len(o.elems)/2)
	for i := 0; i+1 < len(o.elems); i += 2 {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(i, j int) int { return compareValues(o.elems[i], o.elems[j]) })
	return idx
}

// compareNumbers compares two JSON numbers by value.
func compareNumbers(a, b string) int {
	if a == b {
		return 0
	}
	ai, aerr := strconv.ParseInt(a, 10, 64)
	bi, berr := strconv.ParseInt(b, 10, 64)
	if aerr == nil && berr == nil {
		switch {
		case ai < bi:
			return -1
		case ai > bi:
			return 1
		}
		return 0
	}
	af, aerr := strconv.ParseFloat(a, 64)
	bf, berr := strconv.ParseFloat(b, 64)
	if aerr == nil && berr == nil && af != bf && !math.IsInf(af, 0) && !math.IsInf(bf, 0) {
		if af < bf {
			return -1
		}
		return 1
	}
	// Equal as float64, or beyond its range: compare exactly, unless an
	// exponent is so large that the exact value would not fit in memory.
	ar, aok := exactNumber(a)
	br, bok := exactNumber(b)
	if aok && bok {
		return ar.Cmp(br)
	}
	return cmpFloat(af, bf)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxExactExponent bounds the exponents compareNumbers compares exactly.
const maxExactExponent = 4096

func exactNumber(s string) (*big.Rat, bool) {
	if i := bytes.IndexAny([]byte(s), "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > maxExactExponent || e < -maxExactExponent {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// appendPlainJSON writes the value at the start of b, Rego text as
// opa_value_dump prints it, as compact JSON, when it holds nothing that
// JSON must write otherwise: no set, no key that is not a string, every
// number a JSON number. It returns the rest of b, and false when the
// value is not such (or not well formed); the caller then reads it
// through the tree (parseValue). It allocates nothing beyond out: most
// results, aclc's decisions among them, take this path.
func appendPlainJSON(out, b []byte, depth int) ([]byte, []byte, bool) {
	if len(b) == 0 || depth > maxResultDepth {
		return out, b, false
	}
	switch c := b[0]; {
	case c == '"':
		n, ok := stringEnd(b)
		if !ok {
			return out, b, false
		}
		return append(out, b[:n]...), b[n:], true
	case c == '[':
		out = append(out, '[')
		b = skipWS(b[1:])
		if len(b) > 0 && b[0] == ']' {
			return append(out, ']'), b[1:], true
		}
		for {
			var ok bool
			if out, b, ok = appendPlainJSON(out, b, depth+1); !ok {
				return out, b, false
			}
			b = skipWS(b)
			switch {
			case len(b) == 0:
				return out, b, false
			case b[0] == ',':
				out = append(out, ',')
				b = skipWS(b[1:])
			case b[0] == ']':
				return append(out, ']'), b[1:], true
			default:
				return out, b, false
			}
		}
	case c == '{':
		out = append(out, '{')
		b = skipWS(b[1:])
		if len(b) > 0 && b[0] == '}' {
			return append(out, '}'), b[1:], true
		}
		for {
			if len(b) == 0 || b[0] != '"' {
				return out, b, false // a key that is not a string, or a set
			}
			n, ok := stringEnd(b)
			if !ok {
				return out, b, false
			}
			out = append(out, b[:n]...)
			b = skipWS(b[n:])
			if len(b) == 0 || b[0] != ':' {
				return out, b, false // a set of strings
			}
			out = append(out, ':')
			if out, b, ok = appendPlainJSON(out, skipWS(b[1:]), depth+1); !ok {
				return out, b, false
			}
			b = skipWS(b)
			switch {
			case len(b) == 0:
				return out, b, false
			case b[0] == ',':
				out = append(out, ',')
				b = skipWS(b[1:])
			case b[0] == '}':
				return append(out, '}'), b[1:], true
			default:
				return out, b, false
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		p := valueParser{b: b}
		v, ok := p.number()
		if !ok || p.rewrote {
			return out, b, false
		}
		return append(out, v.raw...), b[p.i:], true
	}
	for _, lit := range [][]byte{litNull, litTrue, litFalse} {
		if bytes.HasPrefix(b, lit) {
			return append(out, lit...), b[len(lit):], true
		}
	}
	return out, b, false
}

// stringEnd returns the length of the string literal at the start of b,
// quotes included, if it is well formed.
func stringEnd(b []byte) (int, bool) {
	p := valueParser{b: b}
	_, ok := p.str()
	return p.i, ok
}

func skipWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// resultSetPrefix and resultSetSuffix enclose the value of a compiled
// entrypoint's result set as opa_value_dump prints it.
const (
	resultSetPrefix = `{{"result": `
	resultSetSuffix = `}}`
)

// plainResult returns the JSON of the value of a result set through
// appendPlainJSON, and false when the result set must be read through
// the tree (unwrapResult).
func plainResult(res []byte) (json.RawMessage, bool) {
	if len(res) < len(resultSetPrefix)+len(resultSetSuffix) ||
		string(res[:len(resultSetPrefix)]) != resultSetPrefix ||
		string(res[len(res)-len(resultSetSuffix):]) != resultSetSuffix {
		return nil, false
	}
	v := res[len(resultSetPrefix) : len(res)-len(resultSetSuffix)]
	out, rest, ok := appendPlainJSON(make([]byte, 0, len(v)), v, 0)
	if !ok || len(skipWS(rest)) != 0 {
		return nil, false
	}
	return out, true
}
