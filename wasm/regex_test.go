package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/wasm"
)

// regexPatterns are RE2 features, anchors, flags, classes and invalid
// patterns: the fragments random patterns are built from, and patterns of
// their own.
var regexPatterns = []string{
	"", "a", "^a", "a$", "^$", ".", "a.c", "a*", "a+", "a?", "a{2}", "a{2,}", "a{1,3}", "a*?", "a+?",
	"[abc]", "[^abc]", "[a-z]", "[A-Z0-9_]", "[[:alpha:]]", "[[:^digit:]]", `\d`, `\D`, `\s`, `\S`, `\w`, `\W`, `\b`, `\B`,
	`\pL`, `\p{Greek}`, `\PN`, "(?i)abc", "(?s).", "(?m)^b", "(?U)a+", "(a|b)", "(?:ab)+", "(?P<x>a)", `\.`, `\*`, `\\`,
	"é", "日本", "[é-ü]", `\x41`, `\x{263a}`, `\Q.*\E`, "^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$", "^[a-zA-Z0-9_:#/@-]{1,64}$",
	// invalid: undefined in both
	"(", ")", "[a", "a{1001}", "*", "a**", `\`, "(?<x>a)", "[z-a]", `\8`, "(?P<>a)", `\pX`,
}

// regexValues are the values matched against.
var regexValues = []string{"", "a", "abc", "ABC", "aaa", "b\nb", "x.y", "a*b", "é", "日本語", "☺", "_name", "root.sandbox", "system:serviceaccount:kube-system:job-controller", "a b", "123", "\t", "Ωmega", "\\"}

// TestRegexRouteAgrees: regex.match served by the host (Go's regexp,
// compiled once per policy) gives OPA's C library's answer (RE2) for every
// pattern of regexPatterns, a few thousand random combinations of them,
// and every value, defined and undefined alike (arguments that are not
// strings are undefined in both), except where the two syntaxes differ.
//
// The host reads the arguments in guest memory; the subtest "json" has it
// read them through opa_json_dump, as it does for a module whose values
// are not laid out as it expects.
func TestRegexRouteAgrees(t *testing.T) {
	for _, direct := range []bool{true, false} {
		name := "direct"
		if !direct {
			name = "json"
		}
		t.Run(name, func(t *testing.T) { testRegexRoute(t, direct) })
	}
}

func testRegexRoute(t *testing.T, direct bool) {
	ctx := context.Background()
	b := buildWasmBundle(t, map[string]string{"p.rego": `package p

m := regex.match(input.p, input.v)

# The compiler's constant pattern and value are interned strings.
c := [regex.match("^[a-z]+$", input.v), regex.match(input.p, "abc"), regex.match("b+", "abbc")]
`}, "", "p/m", "p/c")
	cfg := wasm.NewConfig().WithPoolSize(1)
	if !direct {
		cfg = wasm.WithRegexThroughJSON(cfg)
	}
	routed, err := wasm.Load(ctx, b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer routed.Close(ctx)
	if !wasm.RegexRouted(routed) || wasm.RegexDirect(routed) != direct {
		t.Fatalf("regex.match served by the host: %v, reading guest memory: %v; want true, %v", wasm.RegexRouted(routed), wasm.RegexDirect(routed), direct)
	}
	own, err := wasm.Load(ctx, b, wasm.WithoutRegexRoute(wasm.NewConfig().WithPoolSize(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)

	patterns := append([]string{}, regexPatterns...)
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var p strings.Builder
		for range 1 + r.IntN(4) {
			p.WriteString(regexPatterns[r.IntN(len(regexPatterns))])
		}
		patterns = append(patterns, p.String())
	}
	inputs := [][]byte{[]byte(`{"p": 1, "v": "a"}`), []byte(`{"p": "a", "v": ["a"]}`), []byte(`{"v": "a"}`), []byte(`{"p": "a", "v": null}`)}
	for _, p := range patterns {
		for _, v := range regexValues {
			in, err := json.Marshal(map[string]string{"p": p, "v": v})
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, in)
		}
	}
	defined := map[string]int{}
	named := 0
	served := int64(0)
	for _, in := range inputs {
		before := wasm.RegexCalls(routed)
		got, gerr := routed.Eval(ctx, "p/m", in)
		served += wasm.RegexCalls(routed) - before
		want, werr := own.Eval(ctx, "p/m", in)
		if string(got) != string(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			// The one difference: Go's regexp takes (?<name>re) as
			// (?P<name>re), the RE2 of OPA's C library refuses it. The host
			// answers as Go does: as OPA's evaluator and YuniKorn.
			var x struct{ P, V string }
			if json.Unmarshal(in, &x) != nil || !strings.Contains(x.P, "(?<") {
				t.Fatalf("input %s: host %s, %v; module %s, %v", in, got, gerr, want, werr)
			}
			re, err := regexp.Compile(x.P)
			if err != nil || string(got) != fmt.Sprint(re.MatchString(x.V)) {
				t.Fatalf("input %s: host %s, %v; Go's regexp %v, %v", in, got, gerr, err, re != nil && re.MatchString(x.V))
			}
			named++
		}
		if gerr != nil {
			defined[gerr.Error()]++
		} else {
			defined[string(got)]++
		}
		var x struct{ P, V any }
		if json.Unmarshal(in, &x) != nil {
			t.Fatal(in)
		}
		gotC, gerr := routed.Eval(ctx, "p/c", in)
		wantC, werr := own.Eval(ctx, "p/c", in)
		if p, ok := x.P.(string); ok && strings.Contains(p, "(?<") {
			continue
		}
		if string(gotC) != string(wantC) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("input %s, constant patterns: host %s, %v; module %s, %v", in, gotC, gerr, wantC, werr)
		}
	}
	// Every input but {"v": "a"}, with no pattern, calls regex.match.
	if calls := served; calls != int64(len(inputs)-1) {
		t.Errorf("the host served %d matches for %d evaluations with a pattern", calls, len(inputs)-1)
	}
	t.Logf("%d evaluations: %v; %d differ from OPA's RE2 as Go's regexp does on (?<name>re)", len(inputs), defined, named)
	for _, want := range []string{"true", "false", "wasm: undefined result"} {
		if defined[want] == 0 {
			t.Errorf("no evaluation answered %s: %v", want, defined)
		}
	}
}
