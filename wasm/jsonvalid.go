package wasm

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// validJSON reports whether b is exactly one JSON value (RFC 8259) with
// optional surrounding white space, nested at most maxDepth levels, and
// whether its strings need sanitize: invalid UTF-8 or UTF-16 surrogate
// escapes. encoding/json (and so OPA's topdown) decode invalid UTF-8 and
// unpaired surrogates as U+FFFD; the guest's parser aborts on the former
// and on lone surrogates, and mis-decodes pairs for U+20000 and above (it ORs
// 0x10000 into the code point instead of adding it). It does not allocate.
//
// The guest's own parser (opa_value_parse) accepts more than JSON (set
// literals) and turns a syntax error into an undefined input instead of an
// error, so the host validates the input first: a malformed request must
// not silently evaluate as "no input".
func validJSON(b []byte, maxDepth int) (ok, needsSanitize bool) {
	s := jsonScanner{b: b, maxDepth: maxDepth}
	return s.valid(), s.needsSanitize
}

// checkInput validates an Eval input; see validJSON.
func checkInput(b []byte) (needsSanitize bool, err error) {
	s := jsonScanner{b: b, maxDepth: maxInputDepth}
	switch {
	case s.valid():
		return s.needsSanitize, nil
	case s.tooDeep:
		return false, errInputTooDeep
	default:
		return false, errInvalidInput
	}
}

func (s *jsonScanner) valid() bool {
	s.ws()
	if !s.value(0) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// sanitize rewrites valid JSON so that the guest decodes it as
// encoding/json does: every byte that is not part of valid UTF-8 becomes
// U+FFFD, a valid surrogate pair escape becomes the character in UTF-8, and
// any other surrogate escape becomes \ufffd.
func sanitize(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u' && i+6 <= len(b):
			u := hex4(b[i+2 : i+6])
			switch {
			case u >= 0xd800 && u < 0xdc00 && lowSurrogateAt(b, i+6):
				out = utf8.AppendRune(out, utf16.DecodeRune(u, hex4(b[i+8:i+12])))
				i += 12
			case u >= 0xd800 && u < 0xe000:
				out = append(out, `\ufffd`...)
				i += 6
			default:
				out = append(out, b[i:i+6]...)
				i += 6
			}
		case c == '\\' && i+1 < len(b):
			out = append(out, b[i:i+2]...)
			i += 2
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
				i++
				continue
			}
			out = append(out, b[i:i+size]...)
			i += size
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// hex4 decodes four hex digits (already validated).
func hex4(h []byte) rune {
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

// lowSurrogateAt reports whether b[i:] starts with a \u escape of a low
// surrogate.
func lowSurrogateAt(b []byte, i int) bool {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return false
	}
	for _, c := range b[i+2 : i+6] {
		if !isHex(c) {
			return false
		}
	}
	u := hex4(b[i+2 : i+6])
	return u >= 0xdc00 && u < 0xe000
}

type jsonScanner struct {
	b             []byte
	i             int
	maxDepth      int
	needsSanitize bool
	tooDeep       bool
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{':
		if depth >= s.maxDepth {
			s.tooDeep = true
			return false
		}
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return true
		}
		for {
			if s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() {
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
	case '[':
		if depth >= s.maxDepth {
			s.tooDeep = true
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
		return s.str()
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

func (s *jsonScanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// str scans a string starting at the opening quote.
func (s *jsonScanner) str() bool {
	s.i++ // opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return false
					}
				}
				if u := hex4(s.b[s.i+1 : s.i+5]); u >= 0xd800 && u < 0xe000 {
					s.needsSanitize = true
				}
				s.i += 5
			default:
				return false
			}
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				s.needsSanitize = true
			}
			s.i += size
		default:
			s.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *jsonScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *jsonScanner) num() bool {
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

// needsSanitizeText reports whether text that is otherwise well formed
// has invalid UTF-8 or a surrogate escape (or what looks like one: sanitize
// leaves an escaped backslash followed by "ud800" as it is).
func needsSanitizeText(b []byte) bool {
	if !utf8.Valid(b) {
		return true
	}
	for i := 0; i+3 < len(b); i++ {
		if b[i] == '\\' && b[i+1] == 'u' && (b[i+2] == 'd' || b[i+2] == 'D') {
			switch b[i+3] {
			case '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'A', 'B', 'C', 'D', 'E', 'F':
				return true
			}
		}
	}
	return false
}

// checkValueInput validates an EvalValue input, Rego value text (see
// value.go), and returns the text the guest is to read: numbers the guest
// cannot read (.5) written out again, strings sanitized.
func checkValueInput(b []byte) ([]byte, error) {
	p := valueParser{b: b, maxDepth: maxInputDepth}
	v, err := p.parse()
	switch {
	case p.tooDeep:
		return nil, errInputTooDeep
	case err != nil:
		return nil, fmt.Errorf("wasm: input is not a Rego value: %w", err)
	}
	if p.rewrote {
		b = appendRego(nil, &v)
	}
	if needsSanitizeText(b) {
		b = sanitize(b)
	}
	return b, nil
}
