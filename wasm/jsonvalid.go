package wasm

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/wasm/jsonscan"
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
	r := jsonscan.Valid(b, maxDepth)
	return r.Valid, r.NeedsSanitize
}

// checkInput validates an Eval input; see validJSON.
func checkInput(b []byte) (needsSanitize bool, err error) {
	r := jsonscan.Valid(b, maxInputDepth)
	switch {
	case r.Valid:
		return r.NeedsSanitize, nil
	case r.TooDeep:
		return false, errInputTooDeep
	default:
		return false, errInvalidInput
	}
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
			u := jsonscan.Hex4(b[i+2 : i+6])
			switch {
			case u >= 0xd800 && u < 0xdc00 && lowSurrogateAt(b, i+6):
				out = utf8.AppendRune(out, utf16.DecodeRune(u, jsonscan.Hex4(b[i+8:i+12])))
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

// lowSurrogateAt reports whether b[i:] starts with a \u escape of a low
// surrogate.
func lowSurrogateAt(b []byte, i int) bool {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return false
	}
	for _, c := range b[i+2 : i+6] {
		if !jsonscan.IsHex(c) {
			return false
		}
	}
	u := jsonscan.Hex4(b[i+2 : i+6])
	return u >= 0xdc00 && u < 0xe000
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
