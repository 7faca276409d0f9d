package admission

import (
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
