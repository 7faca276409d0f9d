// Package jsonscan checks JSON text (RFC 8259) in one pass, without
// building any value: whether it is exactly one JSON value, how deep it
// nests, whether its strings hold invalid UTF-8 or surrogate escapes, and
// whether an object holds a key twice. It is the one JSON scanner of aclc:
// the Wasm host validates every input and result with it, and the
// admission decisions refuse reviews whose objects repeat a key with it.
// It imports nothing of aclc, so a Go program that only evaluates bundles
// keeps a small dependency graph.
package jsonscan

import (
	"encoding/json"
	"unicode/utf8"
)

// Result is what a scan found.
type Result struct {
	// Valid is set when the text is exactly one JSON value, with optional
	// surrounding white space, nested at most the scan's depth.
	Valid bool
	// TooDeep is set when the text nests deeper than the scan's depth
	// (then Valid is not).
	TooDeep bool
	// NeedsSanitize is set when a string holds invalid UTF-8 or a
	// surrogate escape (\ud800 to \udfff), which decoders read
	// differently.
	NeedsSanitize bool
	// DuplicateKey, with Duplicate set, is a key one object holds twice,
	// compared as encoding/json decodes keys (escapes resolved, invalid
	// UTF-8 read as U+FFFD); only a scan that looks for one sets it, and
	// it stops there.
	DuplicateKey string
	Duplicate    bool
}

// Valid scans b, nested at most maxDepth levels.
func Valid(b []byte, maxDepth int) Result {
	s := scanner{b: b, maxDepth: maxDepth}
	s.scan()
	return s.res
}

// DuplicateKey scans b, nested at most maxDepth levels, and stops at the
// first object that holds a key twice: Result.Duplicate and DuplicateKey
// say which. Keys are recorded only while their object is scanned, and
// decoded only when they hold an escape or a byte beyond ASCII: a review
// of 300,000 groups is one pass over its bytes.
func DuplicateKey(b []byte, maxDepth int) Result {
	s := scanner{b: b, maxDepth: maxDepth, keys: true}
	s.scan()
	return s.res
}

type scanner struct {
	b        []byte
	i        int
	maxDepth int
	keys     bool // look for duplicate keys
	res      Result
}

func (s *scanner) scan() {
	s.ws()
	if !s.value(0) {
		return
	}
	s.ws()
	s.res.Valid = s.i == len(s.b)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{':
		if depth >= s.maxDepth {
			s.res.TooDeep = true
			return false
		}
		return s.object(depth)
	case '[':
		if depth >= s.maxDepth {
			s.res.TooDeep = true
			return false
		}
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case ',':
				s.i++
				s.ws()
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return s.num()
		}
		return false
	}
}

func (s *scanner) object(depth int) bool {
	s.i++ // {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	var seen map[string]struct{}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		start := s.i
		plain, ok := s.str()
		if !ok {
			return false
		}
		if s.keys && !s.noteKey(&seen, s.b[start:s.i], plain) {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !s.value(depth + 1) {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// noteKey records the key (its text with the quotes; plain when that text
// is the key itself), and stops the scan at a key the object holds
// already.
func (s *scanner) noteKey(seen *map[string]struct{}, raw []byte, plain bool) bool {
	var k string
	if plain {
		k = string(raw[1 : len(raw)-1])
	} else {
		_ = json.Unmarshal(raw, &k) // a valid string: escapes resolved, bad UTF-8 as U+FFFD
	}
	if _, dup := (*seen)[k]; dup {
		s.res.DuplicateKey, s.res.Duplicate = k, true
		return false
	}
	if *seen == nil {
		*seen = map[string]struct{}{}
	}
	(*seen)[k] = struct{}{}
	return true
}

func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// str scans a string starting at its opening quote; plain reports that
// its text is the string itself (no escape, valid UTF-8).
func (s *scanner) str() (plain, ok bool) {
	s.i++ // opening quote
	plain = true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return plain, true
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.b) {
				return false, false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 {
					return false, false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !IsHex(h) {
						return false, false
					}
				}
				if u := Hex4(s.b[s.i+1 : s.i+5]); u >= 0xd800 && u < 0xe000 {
					s.res.NeedsSanitize = true
				}
				s.i += 5
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				s.res.NeedsSanitize = true
				plain = false
			}
			s.i += size
		default:
			s.i++
		}
	}
	return false, false
}

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Hex4 decodes four hexadecimal digits (already checked with IsHex).
func Hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *scanner) num() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if !s.digits() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}
