package opabuiltins

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// appendJSON appends the JSON text of v as json.Marshal(ast.JSON(v))
// means it: the same document (sets as arrays, a non-string key as its
// JSON text, invalid UTF-8 as U+FFFD), written in one pass over the value.
// Going through ast.JSON built a Go map for every object and made
// json.Marshal sort each one's keys again: for an admission review's Pod
// with 200,000 labels, most of the time a decision took on OPA's
// evaluator. Key order is the object's own; no reader of a builtin's
// arguments depends on it.
func appendJSON(b []byte, v ast.Value) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case ast.Null:
		return append(b, "null"...), nil
	case ast.Boolean:
		if v {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case ast.Number:
		// json.Marshal checks a json.Number and refuses what JSON does
		// not allow (".5", "1."); so does this. It writes "" as 0.
		if v == "" {
			return append(b, '0'), nil
		}
		if !json.Valid([]byte(v)) || !isNumber(string(v)) {
			return nil, fmt.Errorf("json: invalid number literal %q", string(v))
		}
		return append(b, v...), nil
	case ast.String:
		return appendString(b, string(v)), nil
	case *ast.Array:
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, v.Elem(i).Value); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case ast.Set:
		b = append(b, '[')
		first := true
		err = v.Iter(func(t *ast.Term) error {
			if !first {
				b = append(b, ',')
			}
			first = false
			b, err = appendJSON(b, t.Value)
			return err
		})
		if err != nil {
			return nil, err
		}
		return append(b, ']'), nil
	case ast.Object:
		b = append(b, '{')
		first := true
		err = v.Iter(func(k, x *ast.Term) error {
			if !first {
				b = append(b, ',')
			}
			first = false
			if s, ok := k.Value.(ast.String); ok {
				b = appendString(b, string(s))
			} else {
				key, err := appendJSON(nil, k.Value)
				if err != nil {
					return err
				}
				b = appendString(b, string(key))
			}
			b = append(b, ':')
			b, err = appendJSON(b, x.Value)
			return err
		})
		if err != nil {
			return nil, err
		}
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("%v requires evaluation", ast.TypeName(v))
	}
}

// isNumber reports whether s, a valid JSON text, is a number and not
// another JSON value such as "true" or "\"1\"".
func isNumber(s string) bool {
	return s[0] == '-' || (s[0] >= '0' && s[0] <= '9')
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string: quote, backslash and control
// characters escaped, invalid UTF-8 as U+FFFD, as json.Marshal writes them
// (its HTML escaping aside, which changes no reader's value).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
