package opabuiltins

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// TestBuiltinArgumentsMeanWhatOPAsJSONMarshallingMeans pins the rule the
// direct encoder keeps: a builtin's argument decodes to the same document
// as json.Marshal(ast.JSON(v)), and fails where that fails.
func TestBuiltinArgumentsMeanWhatOPAsJSONMarshallingMeans(t *testing.T) {
	for _, tc := range []struct{ name, rego string }{
		{"scalars", `[null, true, false, 0, -1.5e300, 12345678901234567890123, "s"]`},
		{"escapes every reader must undo", `"q\" b\\ nl\n cr\r tab\t nul\u0000 bell\u0007 del\u007f"`},
		{"html and line separators stay values", `"<a href='x'>&amp;</a> \u2028 \u2029"`},
		{"non-ASCII text", `"żółć 日本 🙂"`},
		{"nested objects and arrays", `{"a": {"b": [1, {"c": []}], "d": {}}, "": "empty key"}`},
		{"a set is an array", `{"s": {1, "x", [2]}}`},
		{"non-string keys are their JSON text", `{1: "one", true: "t", null: "n", [1, "a"]: "arr", {"k": 1}: "obj"}`},
		{"many keys", "{" + strings.Repeat(`"k": 1, `, 0) + manyKeys(2000) + "}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ast.MustParseTerm(tc.rego).Value
			got, err := appendJSON(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			x, err := ast.JSON(v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("not JSON: %v: %s", err, got)
			}
			if err := json.Unmarshal(want, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("got %s\nwant %s", got, want)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`": `)
		b.WriteString("1")
	}
	return b.String()
}

func TestBuiltinArgumentsWithInvalidUTF8CarryTheReplacementCharacter(t *testing.T) {
	v := ast.String("a\xffb\xc3")
	got, err := appendJSON(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(string(v))
	if string(got) != string(want) {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestBuiltinArgumentsRefuseNumbersJSONRefuses(t *testing.T) {
	for _, n := range []string{".5", "1.", "01", "+1", "0x10", "NaN", ""} {
		_, err := appendJSON(nil, ast.Number(n))
		_, want := json.Marshal(json.Number(n))
		if (err == nil) != (want == nil) {
			t.Errorf("%q: got error %v, json.Marshal's %v", n, err, want)
		}
	}
}

func TestBuiltinArgumentsThatNeedEvaluationAreRefused(t *testing.T) {
	if _, err := appendJSON(nil, ast.MustParseTerm(`{"a": x}`).Value); err == nil {
		t.Error("a variable was encoded")
	}
}

// TestRawArgumentsStandForTheVeryValueOnly: a builtin handed the value the
// caller parsed gets the caller's text; an equal value built elsewhere is
// encoded anew.
func TestRawArgumentsStandForTheVeryValueOnly(t *testing.T) {
	parsed := ast.MustParseTerm(`{"a": 1}`).Value.(ast.Object)
	equal := ast.MustParseTerm(`{"a": 1}`).Value.(ast.Object)
	ctx := WithRawArguments(context.Background(), RawArgument{Value: parsed, JSON: []byte(`{"a":1,"text":"the caller's"}`)})
	if got := rawArgument(ctx, parsed); string(got) != `{"a":1,"text":"the caller's"}` {
		t.Errorf("the parsed value: got %s", got)
	}
	if got := rawArgument(ctx, equal); got != nil {
		t.Errorf("an equal value: got %s, want a new encoding", got)
	}
	if got := rawArgument(ctx, ast.String("x")); got != nil {
		t.Errorf("a string: got %s", got)
	}
	if got := rawArgument(context.Background(), parsed); got != nil {
		t.Errorf("no raw arguments: got %s", got)
	}
}
