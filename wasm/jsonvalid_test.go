package wasm_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/wasm"
)

var jsonCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e10`, `-1E-2`, `"x"`, ` {"a" : [1, 2, {"b": null}] } `,
	`"\u00e9\n\t\"\\\/"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, `"\ud800\ud800"`, `"\ud870\udC00"`, `"\uDBFF\uDFFF\ud83d\ude00"`,
	"\"\xff\xfe\"", "\"a\xc3\"", `{"a":1,"a":2}`,
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{1:2}`, `01`, `1.`, `.5`, `1e`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`,
	"\"\x01\"", `{"a" 1}`, `[1 2]`, `"unterminated`, `{} {}`, `NaN`, `Infinity`, `{"a":1}x`,
	// Valid JSON numbers that overflow float64: valid all the same.
	`1e700`, `[-1e700, 123456789012345678901234567890]`,
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		checkValidJSON(t, []byte(c))
	}
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	if ok, _ := wasm.ValidJSON([]byte(deep)); ok {
		t.Error("1001 levels of nesting accepted")
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !tooDeep(b) {
			checkValidJSON(t, b)
		}
	})
}

// checkValidJSON: ValidJSON agrees with json.Valid, and the sanitized text
// decodes (with encoding/json) to the same value, has valid UTF-8 and only
// paired surrogate escapes.
func checkValidJSON(t *testing.T, b []byte) {
	t.Helper()
	ok, needs := wasm.ValidJSON(b)
	if want := json.Valid(b); ok != want {
		t.Fatalf("ValidJSON(%q) = %v, json.Valid = %v", b, ok, want)
	}
	if !ok {
		return
	}
	s := b
	if needs {
		s = wasm.Sanitize(b)
	}
	if !utf8.Valid(s) {
		t.Fatalf("sanitized %q is not valid UTF-8", s)
	}
	if ok2, needs2 := wasm.ValidJSON(s); !ok2 || needs2 {
		t.Fatalf("sanitized %q: valid %v, needs sanitize %v", s, ok2, needs2)
	}
	v1, err := decodeExact(b)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := decodeExact(s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v1, v2) {
		t.Fatalf("sanitize changed %q (%v) to %q (%v)", b, v1, s, v2)
	}
}

// decodeExact decodes JSON keeping numbers as their text: JSON numbers have
// no range, and 1e700 is valid JSON that float64 cannot hold.
func decodeExact(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
