package wasm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/wasm"
)

// layoutPolicy returns its input, parts of it, and values built from it,
// so that both the input the host writes and the result it prints are
// read.
const layoutPolicy = `package layout

whole := input

keys := [k | some k, _ in input]

values := [v | some _, v in input]

count_all := count(input)

first := input[0]

upper_keys := {upper(k): v | some k, v in input}

concat_strings := concat("/", [s | some s in input; is_string(s)])

set_of := {x | some x in input}

numbers := [y | some x in input; is_number(x); y := x + 1]
`

var layoutEntrypoints = []string{"layout/whole", "layout/keys", "layout/values", "layout/count_all", "layout/first",
	"layout/upper_keys", "layout/concat_strings", "layout/set_of", "layout/numbers"}

// layoutInputs are documents whose parsed form has each feature of the C
// library's layout the host writes: bucket growth, chains sorted by key,
// duplicate keys, array growth, escapes and UTF-8, number literals kept as
// written, and nesting.
var layoutInputs = map[string]string{
	"no input":                             ``,
	"null":                                 `null`,
	"scalars":                              `[true, false, null, 0, -0, 1.50, 1e400, -2.5E-3, "", "a"]`,
	"escapes and UTF-8":                    `["\"\\\/\b\f\n\r\t", "\u0000\u001f\u007f", "é☺😀", "\u00e9\u263a\ud83d\ude00", "\ud800", "a\u0000b"]`,
	"invalid UTF-8 decoded as U+FFFD":      "[\"\xff\xfe\", \"a\xc3\"]",
	"keys past the first bucket growth":    `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6}`,
	"keys past several bucket growths":     objectOf(200),
	"keys given twice keep the last value": `{"a": 1, "b": 2, "a": {"x": [3]}, "b": "two", "a": 4}`,
	"arrays past the first growth":         arrayOf(10) + `, ` + arrayOf(11) + `, ` + arrayOf(41),
	"empty collections":                    `{"": {}, "a": [], "b": [[]], "c": [{}]}`,
	"nesting":                              strings.Repeat(`{"a": [`, 200) + `1` + strings.Repeat(`]}`, 200),
	"white space":                          " \t\n{ \"a\" :\r[ 1 , 2 ] , \"b\" : { } }\n",
	"seed queue input":                     `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`,
}

func objectOf(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"key-` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + `": ` + itoa(i))
	}
	b.WriteString("}")
	return b.String()
}

func arrayOf(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(itoa(i))
	}
	b.WriteString("]")
	return b.String()
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

// TestDirectLayoutMatchesGuest pins that the input the host writes in the
// module's layout is the guest parser's, field by field, and that the host
// prints every result as the guest's opa_value_dump does: the layout check
// compares both at every evaluation; and that the answers are those of the
// text path through opa_eval.
func TestDirectLayoutMatchesGuest(t *testing.T) {
	ctx := context.Background()
	bundle := buildWasmBundle(t, map[string]string{"layout.rego": layoutPolicy}, `{}`, layoutEntrypoints...)
	checked := mustLoad(t, bundle, wasm.WithLayoutCheck(wasm.NewConfig().WithPoolSize(1)))
	if !wasm.Direct(checked) {
		t.Fatal("the host does not move values in the module's layout")
	}
	text := mustLoad(t, bundle, wasm.WithoutDirect(wasm.NewConfig().WithPoolSize(1)))
	if wasm.Direct(text) {
		t.Fatal("WithoutDirect: the host moves values in the module's layout")
	}
	for name, input := range layoutInputs {
		for _, ep := range layoutEntrypoints {
			got, err := checked.Eval(ctx, ep, []byte(input))
			want, werr := text.Eval(ctx, ep, []byte(input))
			if (err == nil) != (werr == nil) || string(got) != string(want) {
				t.Errorf("%s, %s: got %.200s, %v; through opa_eval %.200s, %v", name, ep, got, err, want, werr)
			}
		}
	}
}

// TestDirectInputGrowsMemory pins that an input whose parsed form does not
// fit in the instance's memory is written where the guest's allocator
// reserved it, after growing the memory.
func TestDirectInputGrowsMemory(t *testing.T) {
	ctx := context.Background()
	bundle := buildWasmBundle(t, map[string]string{"layout.rego": layoutPolicy}, `{}`, "layout/count_all", "layout/whole")
	p := mustLoad(t, bundle, wasm.WithLayoutCheck(wasm.NewConfig().WithPoolSize(1)))
	big := objectOf(40000)
	got, err := p.Eval(ctx, "layout/count_all", []byte(big))
	if err != nil || string(got) != "40000" {
		t.Fatalf("got %s, %v", got, err)
	}
	// The next evaluation, small again, reuses the grown instance.
	got, err = p.Eval(ctx, "layout/whole", []byte(`{"a": 1}`))
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("got %s, %v", got, err)
	}
}

// BenchmarkDirectWideObject writes an input object of 10,000 keys, a few
// of them twice: the host sorts the keys once, so the cost grows as
// n log n, as the guest's own parser's grows about linearly.
func BenchmarkDirectWideObject(b *testing.B) {
	ctx := context.Background()
	bundle := buildWasmBundle(b, map[string]string{"layout.rego": layoutPolicy}, `{}`, "layout/count_all")
	p, err := wasm.Load(ctx, bundle, wasm.NewConfig().WithPoolSize(1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(ctx) })
	input := []byte(strings.TrimSuffix(objectOf(10000), "}") + `, "key-a0": 1, "key-xb1": 2}`)
	b.ReportAllocs()
	for b.Loop() {
		if v, err := p.Eval(ctx, "layout/count_all", input); err != nil || string(v) != "10000" {
			b.Fatalf("got %s, %v", v, err)
		}
	}
}
