package admission

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckCanonical: a review the API server cannot have sent is named,
// whatever else it holds; what it can send passes.
func TestCheckCanonical(t *testing.T) {
	pod := func(meta string) string {
		return `{"request":{"uid":"u","kind":{"kind":"Pod"},"object":{"metadata":` + meta + `}}}`
	}
	for _, tc := range []struct {
		name, review, want string // want: part of the error, "" for none
	}{
		{"a plain review", pod(`{"name":"p","annotations":{"a":"1"}}`), ""},
		{"map keys differing in case", pod(`{"labels":{"Team":"a","team":"b"},"annotations":{"Spec":"x","Metadata":"y"}}`), ""},
		{"a key twice in metadata", pod(`{"annotations":{},"annotations":{}}`), `key "annotations" given twice`},
		{"a key twice in an annotation map", pod(`{"annotations":{"a":"1","a":"2"}}`), `key "a" given twice`},
		{"a key twice inside an array", `{"request":{"object":{"spec":{"containers":[{"name":"a","name":"b"}]}}}}`, `key "name" given twice`},
		{"the same key written with an escape", pod(`{"labels":{"a":"1","\u0061":"2"}}`), `key "a" given twice`},
		{"a key twice in the envelope", `{"request":{"uid":"a","uid":"b"}}`, `key "uid" given twice`},
		{"Annotations", pod(`{"Annotations":{}}`), `"/metadata/annotations" spelled "Annotations"`},
		{"a long s folds to s", pod(`{"annotationſ":{}}`), `spelled "annotationſ"`},
		{"Metadata on oldObject", `{"request":{"oldObject":{"Metadata":{}}}}`, `"/metadata" spelled "Metadata"`},
		{"a CronJob template", `{"request":{"object":{"spec":{"jobTemplate":{"spec":{"template":{"metadata":{"Labels":{}}}}}}}}}`, `"/spec/jobTemplate/spec/template/metadata/labels" spelled "Labels"`},
		{"jobtemplate", `{"request":{"object":{"spec":{"jobtemplate":{}}}}}`, `spelled "jobtemplate"`},
		{"not JSON is left to the decision", `{"request":`, ""},
		{"a key twice after text that is not JSON", `{"a":1,"a":2} x`, ""},
		{"two invalid UTF-8 keys read as U+FFFD", "{\"request\":{\"\xff\":1,\"\xfe\":2}}", `given twice`},
		{"a non-ASCII key written as is and escaped", pod(`{"labels":{"é":"1","\u00e9":"2"}}`), `given twice`},
		{"keys that differ in one escaped byte", pod(`{"labels":{"a\"b":"1","a\\b":"2"}}`), ""},
		{"a key twice deep in arrays", `{"request":{"x":[[[{"k":1}],{"k":1,"k":2}]]}}`, `key "k" given twice`},
		{"the same key in sibling objects", `{"request":{"x":[{"k":1},{"k":2}],"y":{"k":3}}}`, ""},
	} {
		err := CheckCanonical([]byte(tc.review))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// referenceDuplicateKeys is noDuplicateKeys as encoding/json's tokenizer
// reads the text: the scanner must find what it finds.
func referenceDuplicateKeys(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys            map[string]bool
		object, wantKey bool
	}
	var stack []frame
	for {
		t, err := d.Token()
		if err != nil {
			return false
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].object && stack[top].wantKey {
			if k, ok := t.(string); ok {
				if stack[top].keys[k] {
					return true
				}
				stack[top].keys[k], stack[top].wantKey = true, false
				continue
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].wantKey = true
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack) - 1; n >= 0 && stack[n].object {
				stack[n].wantKey = true
			}
		}
	}
}

// FuzzNoDuplicateKeys: on every valid JSON text, the scanner and
// encoding/json's tokenizer agree on whether some object holds a key twice.
func FuzzNoDuplicateKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `{"\u0061":1,"a":2}`, "{\"\xff\":1,\"\xfe\":1}", `[{"a":1},{"a":1}]`, `"x"`, `{"a":"\\\"","b":"}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			if noDuplicateKeys(b) != nil {
				t.Fatalf("%q: not JSON, yet a duplicate was named", b)
			}
			return
		}
		if got, want := noDuplicateKeys(b) != nil, referenceDuplicateKeys(b); got != want {
			t.Fatalf("%q: scanner says duplicate=%v, encoding/json's tokenizer %v", b, got, want)
		}
	})
}
