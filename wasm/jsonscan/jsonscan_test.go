package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidIsRFC8259(t *testing.T) {
	for _, tt := range []struct {
		name, in            string
		valid, deep, sanity bool
	}{
		{"an object", `{"a": [1, -2.5e3, true, null, "x"]}`, true, false, false},
		{"white space around", " \n[]\t", true, false, false},
		{"two values are not one", `{} {}`, false, false, false},
		{"a trailing comma", `[1,]`, false, false, false},
		{"a leading zero", `01`, false, false, false},
		{"a control character in a string", "\"a\x01\"", false, false, false},
		{"a bad escape", `"\x"`, false, false, false},
		{"a lone surrogate needs sanitizing", `"\ud800"`, true, false, true},
		{"invalid UTF-8 needs sanitizing", "\"\xff\"", true, false, true},
		{"nesting past the depth", `[[[1]]]`, false, true, false},
		{"nesting at the depth", `[[1]]`, true, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Valid([]byte(tt.in), 2)
			if r.Valid != tt.valid || r.TooDeep != tt.deep || (tt.valid && r.NeedsSanitize != tt.sanity) {
				t.Errorf("Valid(%q) = %+v", tt.in, r)
			}
		})
	}
}

func TestDuplicateKeyComparesKeysAsDecoded(t *testing.T) {
	for _, tt := range []struct {
		name, in, key string
		dup           bool
	}{
		{"no duplicate", `{"a":1,"b":{"a":2}}`, "", false},
		{"a key twice", `{"a":1,"a":2}`, "a", true},
		{"deep inside an array", `[{"x":{"k":1,"k":2}}]`, "k", true},
		{"an escape spells the same key", `{"a":1,"\u0061":2}`, "a", true},
		{"invalid UTF-8 reads as U+FFFD", "{\"\xff\":1,\"\ufffd\":2}", "\ufffd", true},
		{"the same key in two objects", `[{"a":1},{"a":2}]`, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := DuplicateKey([]byte(tt.in), 100)
			if r.Duplicate != tt.dup || r.DuplicateKey != tt.key {
				t.Errorf("DuplicateKey(%q) = %+v, want %q %v", tt.in, r, tt.key, tt.dup)
			}
		})
	}
}

// The scanner never panics, and agrees with encoding/json on what is one
// JSON value (within the depth, which encoding/json does not bound below
// 10000).
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, "\"\xff\"", `{"a":1,"a":2}`, `[1e5,-0.0]`, `{`, strings.Repeat("[", 40)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := Valid(b, 10000)
		if r.Valid != json.Valid(b) {
			t.Fatalf("Valid = %v, encoding/json says %v: %q", r.Valid, json.Valid(b), b)
		}
		d := DuplicateKey(b, 10000)
		if d.Duplicate && !strings.Contains(string(b), "\"") {
			t.Fatalf("a duplicate key in text without a string: %q", b)
		}
	})
}
