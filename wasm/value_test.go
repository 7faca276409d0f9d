package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/wasm"
)

// TestValueEncoding pins how a value the guest prints (opa_value_dump's
// Rego text) leaves the host, as JSON (Eval, BuiltinFunc arguments) and
// as Rego text (EvalValue, ValueBuiltinFunc arguments).
func TestValueEncoding(t *testing.T) {
	tests := []struct {
		name, dump, json, rego string
	}{
		{"a set is sorted in OPA's order", `{"b", 3, "a", null, [1], {"k": 1}, true, {2}}`,
			`[null,true,3,"a","b",[1],{"k":1},[2]]`, `{null, true, 3, "a", "b", [1], {"k": 1}, {2}}`},
		{"the empty set is set() in Rego and [] in JSON", `set()`, `[]`, `set()`},
		{"the empty object stays an object", `{}`, `{}`, `{}`},
		{"numbers in a set are sorted by value", `{10, 9.5, -1, 1e2, 2}`, `[-1,2,9.5,10,1e2]`, `{-1, 2, 9.5, 10, 1e2}`},
		{"equal elements of a set are one", `{1, 1.0, "a", "\u0061"}`, `[1,"a"]`, `{1, "a"}`},
		{"strings in a set are sorted by their bytes", `{"é", "z", "A", "\u00e8"}`, `["A","z","\u00e8","é"]`, `{"A", "z", "\u00e8", "é"}`},
		{"a number literal .5 leaves as 0.5", `[.5, -.5, .0, 0.25]`, `[0.5,-0.5,0.0,0.25]`, `[0.5, -0.5, 0.0, 0.25]`},
		{"objects keep the module's key order", `{"z": 1, "a": {"y": 2, "b": 3}}`, `{"z":1,"a":{"y":2,"b":3}}`, `{"z": 1, "a": {"y": 2, "b": 3}}`},
		{"a non-string key is the string of its JSON", `{1: "a", [1, "x"]: "b", {"b", "a"}: "c"}`,
			`{"1":"a","[1,\"x\"]":"b","[\"a\",\"b\"]":"c"}`, `{1: "a", [1, "x"]: "b", {"a", "b"}: "c"}`},
		{"sets nested in arrays and objects are sorted", `[{"s": {3, 1, 2}}]`, `[{"s":[1,2,3]}]`, `[{"s": {1, 2, 3}}]`},
		{"sets of sets are sorted by their sorted elements", `{{2, 3}, {1, 4}, {1}}`, `[[1],[1,4],[2,3]]`, `{{1}, {1, 4}, {2, 3}}`},
		{"sets of objects are sorted by sorted keys then values", `{{"b": 1}, {"a": 2}, {"a": 1, "c": 0}}`,
			`[{"a":1,"c":0},{"a":2},{"b":1}]`, `{{"a": 1, "c": 0}, {"a": 2}, {"b": 1}}`},
		{"string escapes are kept as the guest wrote them", `["\n\t\"\\\u0001"]`, `["\n\t\"\\\u0001"]`, `["\n\t\"\\\u0001"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := wasm.CanonicalJSON([]byte(tt.dump))
			if err != nil {
				t.Fatal(err)
			}
			if string(j) != tt.json {
				t.Errorf("JSON: got %s, want %s", j, tt.json)
			}
			if !json.Valid(j) {
				t.Errorf("JSON %s is not valid JSON", j)
			}
			r, err := wasm.CanonicalRego([]byte(tt.dump))
			if err != nil {
				t.Fatal(err)
			}
			if string(r) != tt.rego {
				t.Errorf("Rego: got %s, want %s", r, tt.rego)
			}
			// The Rego text is the value OPA reads from the dump.
			want := ast.MustParseTerm(tt.dump)
			if got, err := ast.ParseTerm(string(r)); err != nil || got.Value.Compare(want.Value) != 0 {
				t.Errorf("Rego text %s reads as %v (%v), want %v", r, got, err, want)
			}
		})
	}
}

// TestValueJSONIsOPAs: the JSON of a value is the JSON OPA's ast.JSON
// gives the same term, up to object key order (the host keeps the
// module's).
func TestValueJSONIsOPAs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		term := ast.NewTerm(randomValue(r, 3))
		text := term.String()
		got, err := wasm.CanonicalJSON([]byte(text))
		if err != nil {
			t.Fatalf("%d: %s: %v", i, text, err)
		}
		j, err := ast.JSON(term.Value)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		var gv, wv any
		if err := util.UnmarshalJSON(got, &gv); err != nil {
			t.Fatalf("%s: host JSON %s: %v", text, got, err)
		}
		if err := util.UnmarshalJSON(want, &wv); err != nil {
			t.Fatal(err)
		}
		if ast.MustInterfaceToValue(gv).Compare(ast.MustInterfaceToValue(wv)) != 0 {
			t.Fatalf("%s: host JSON %s, OPA's %s", text, got, want)
		}
		// Sets keep their elements in OPA's order: the arrays are equal
		// as they stand, not only as sets.
	}
}

// TestValueOrderIsOPAs: the host orders values as OPA's ast.Compare does.
func TestValueOrderIsOPAs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		a, b := ast.NewTerm(randomValue(r, 2)), ast.NewTerm(randomValue(r, 2))
		if r.IntN(4) == 0 {
			b = a.Copy()
		}
		got, err := wasm.CompareValueText([]byte(a.String()), []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if want := ast.Compare(a, b); sign(got) != sign(want) {
			t.Fatalf("%d: compare(%v, %v) = %d, OPA's %d", i, a, b, got, want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// randomValue draws a Rego value of at most depth levels: numbers close
// to each other in several spellings, short strings with escapes and
// non-ASCII, arrays, objects with any keys, and sets.
func randomValue(r *rand.Rand, depth int) ast.Value {
	n := 7
	if depth == 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return ast.Null{}
	case 1:
		return ast.Boolean(r.IntN(2) == 0)
	case 2:
		nums := []string{"0", "1", "-1", "2", "10", "1.5", "1.50", "0.5", "-0.5", "1e1", "1E2", "9007199254740993", "9007199254740992.5", "1e400", "-2.5e-3"}
		return ast.Number(nums[r.IntN(len(nums))])
	case 3:
		strs := []string{"", "a", "b", "A", "é", "\n", "\"q\"", "a\\b", "\t", "z"} // no other control characters: ast.String quotes them as Go does (\x01), which no Rego parser reads
		return ast.String(strs[r.IntN(len(strs))])
	case 4:
		elems := make([]*ast.Term, r.IntN(4))
		for i := range elems {
			elems[i] = ast.NewTerm(randomValue(r, depth-1))
		}
		return ast.NewArray(elems...)
	case 5:
		obj := ast.NewObject()
		for range r.IntN(4) {
			var k ast.Value = ast.String(fmt.Sprint("k", r.IntN(5)))
			if r.IntN(4) == 0 {
				k = randomValue(r, depth-1)
			}
			obj.Insert(ast.NewTerm(k), ast.NewTerm(randomValue(r, depth-1)))
		}
		return obj
	}
	s := ast.NewSet()
	for range r.IntN(5) {
		s.Add(ast.NewTerm(randomValue(r, depth-1)))
	}
	return s
}

// TestValueInput pins what EvalValue accepts as input: Rego value text
// the guest's opa_value_parse reads, numbers it cannot read written as
// JSON numbers; anything else is refused with the offset.
func TestValueInput(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"JSON is accepted as it is", `{"a": [1, "x", null]}`, `{"a": [1, "x", null]}`, ""},
		{"a set literal is accepted", `{"users": {"sue", "bob"}}`, `{"users": {"sue", "bob"}}`, ""},
		{"the empty set is accepted", `set()`, `set()`, ""},
		{"a non-string key is accepted", `{1: "a"}`, `{1: "a"}`, ""},
		{"a number written .5 is given to the guest as 0.5", `{"p": .5}`, `{"p": 0.5}`, ""},
		{"a trailing comma is refused", `{"a": 1,}`, "", "not a Rego value"},
		{"a set with a key is refused", `{"a", "b": 1}`, "", "not a Rego value"},
		{"a leading zero is refused", `[01]`, "", "not a Rego value"},
		{"a bare word is refused", `{"a": sue}`, "", "not a Rego value"},
		{"set( without ) is refused", `set(`, "", "not a Rego value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wasm.CheckValueInput([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %s, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	if _, err := wasm.CheckValueInput([]byte(deep)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("input nested 1001 levels: got %v, want the depth error", err)
	}
}

// TestPlainPathIsTheTreesJSON: a value that JSON holds as it is takes the
// host's allocation-free path, and that path writes exactly what the tree
// writes; a value with a set, a key that is not a string or a number
// written .5 does not take it.
func TestPlainPathIsTheTreesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	plain := 0
	for range 3000 {
		text := []byte(ast.NewTerm(randomValue(r, 3)).String())
		tree, err := wasm.CanonicalJSON(text)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := wasm.PlainJSON(text)
		if !ok {
			continue
		}
		plain++
		if string(got) != string(tree) {
			t.Fatalf("%s: plain path %s, tree %s", text, got, tree)
		}
	}
	if plain < 300 {
		t.Errorf("only %d of 3000 values took the plain path", plain)
	}
	for _, text := range []string{`{1, 2}`, `set()`, `{1: "a"}`, `{"a", "b"}`, `[.5]`, `[-.5]`, `{"a": [{"b"}]}`, `[1,`, `{"a" 1}`} {
		if got, ok := wasm.PlainJSON([]byte(text)); ok {
			t.Errorf("%s took the plain path, giving %s", text, got)
		}
	}
}

// TestResultSetShapes: the value of a compiled entrypoint's result set,
// one binding of "result", takes the plain path when JSON holds it; any
// other shape is left to the tree, which refuses it.
func TestResultSetShapes(t *testing.T) {
	tests := []struct {
		name, res, want string
		plain           bool
	}{
		{"a decision object", `{{"result": {"allow": true, "reason": "a, b: c"}}}`, `{"allow":true,"reason":"a, b: c"}`, true},
		{"a number", `{{"result": 1}}`, `1`, true},
		{"a set value takes the tree", `{{"result": {"b", "a"}}}`, "", false},
		{"undefined takes the tree", `set()`, "", false},
		{"two results take the tree", `{{"result": 1}, {"result": 2}}`, "", false},
		{"a binding of another name takes the tree", `{{"x": 1}}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := wasm.PlainResult([]byte(tt.res))
			if ok != tt.plain || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s, %v", got, ok, tt.want, tt.plain)
			}
		})
	}
}

// TestSetsCrossTheBoundary pins, on a policy, what a host builtin and a
// caller receive: a ValueBuiltinFunc gets a set as a set, a BuiltinFunc
// as its sorted array, EvalValue's input may be a set, and a builtin may
// not be supplied both ways.
func TestSetsCrossTheBoundary(t *testing.T) {
	ctx := context.Background()
	raw, err := os.ReadFile("testdata/sets-wasm.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	var jsonArgs, valueArgs []string
	jsonSubset := map[string]wasm.BuiltinFunc{"object.subset": func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
		jsonArgs = append(jsonArgs, string(args[0]), string(args[1]))
		return json.RawMessage("true"), nil
	}}
	valueSubset := map[string]wasm.ValueBuiltinFunc{"object.subset": func(_ context.Context, args [][]byte) ([]byte, error) {
		valueArgs = append(valueArgs, string(args[0]), string(args[1]))
		return []byte("true"), nil
	}}
	input := []byte(`{"granted": {"write", "read", "exec"}, "wanted": {"read", .5}}`)

	p := mustLoad(t, raw, wasm.NewConfig().WithBuiltins(jsonSubset))
	if got := p.Builtins(); !slices.Equal(got, []string{"object.subset"}) {
		t.Errorf("Builtins() = %q, want the one the module calls", got)
	}
	if _, err := p.EvalValue(ctx, "sets/covered", input); err != nil {
		t.Fatal(err)
	}
	if want := []string{`["exec","read","write"]`, `[0.5,"read"]`}; !slices.Equal(jsonArgs, want) {
		t.Errorf("a BuiltinFunc got %q, want %q", jsonArgs, want)
	}

	p = mustLoad(t, raw, wasm.NewConfig().WithValueBuiltins(valueSubset))
	if _, err := p.EvalValue(ctx, "sets/covered", input); err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"exec", "read", "write"}`, `{0.5, "read"}`}; !slices.Equal(valueArgs, want) {
		t.Errorf("a ValueBuiltinFunc got %q, want %q", valueArgs, want)
	}

	// Eval takes JSON only: a set in its input is refused, not read as
	// something else.
	if _, err := p.Eval(ctx, "sets/members", []byte(`{"users": {"sue"}}`)); err == nil {
		t.Error("Eval accepted a set in its input")
	}

	_, err = wasm.Load(ctx, raw, wasm.NewConfig().WithBuiltins(jsonSubset).WithValueBuiltins(valueSubset))
	wantErr(t, err, `builtin "object.subset" supplied both over JSON and over Rego values`)
}

// FuzzValueText feeds arbitrary text to the host's reader of Rego values
// (EvalValue's input, what the module prints, a ValueBuiltinFunc's
// result). Properties: it never panics; text it accepts OPA's parser
// accepts too, as the same value once written out; its JSON is OPA's
// ast.JSON of that value; the plain path, when taken, writes the tree's
// JSON.
func FuzzValueText(f *testing.F) {
	for _, s := range []string{
		`{"a": {1, 2}, 3: [set(), {}]}`, `{.5, -.5, 1e3, 0}`, `{{"b": 1}, {"a": 2}}`,
		`["\u00e9\n\"", "\ud83d\ude00"]`, `{"a" : 1 , "b":[true,false,null]}`, `{[1]: {"x"}}`,
		`set( )`, `{,}`, `[01]`, `{"a", "b": 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		tree, err := wasm.CanonicalJSON(text)
		if plain, ok := wasm.PlainJSON(text); ok && (err != nil || !bytes.Equal(plain, tree)) {
			t.Fatalf("%q: plain path %s, tree %s (%v)", text, plain, tree, err)
		}
		if err != nil {
			return
		}
		rego, err := wasm.CanonicalRego(text)
		if err != nil {
			t.Fatalf("%q: read as JSON but not as Rego: %v", text, err)
		}
		term, err := ast.ParseTerm(string(rego))
		if err != nil {
			if strings.Contains(err.Error(), "illegal string literal") || !utf8.Valid(rego) {
				return // strings ast.ParseTerm reads through encoding/json, which is stricter
			}
			t.Fatalf("%q: OPA cannot read the host's %s: %v", text, rego, err)
		}
		j, err := ast.JSON(term.Value)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		var gv, wv any
		if err := util.UnmarshalJSON(tree, &gv); err != nil {
			t.Fatalf("%q: host JSON %s: %v", text, tree, err)
		}
		if err := util.UnmarshalJSON(want, &wv); err != nil {
			t.Fatal(err)
		}
		if ast.MustInterfaceToValue(gv).Compare(ast.MustInterfaceToValue(wv)) != 0 {
			t.Fatalf("%q: host JSON %s, OPA's %s", text, tree, want)
		}
	})
}
