package cel

import (
	"strconv"
	"strings"
	"testing"
)

// CEL's string escapes are Go's: every literal Quote writes reads back,
// as a Go literal, as the text it was given; no raw control character or
// line separator is left in the policy's YAML.
func TestCELStringReadsBackAsTheText(t *testing.T) {
	for _, s := range []string{"", "^kube-system$", `a"b\c`, "tab\there", "nl\nx\x00\x1f\x7f", "é\u2028\u2029ü", "\xff\xfe", `\p{Greek}`} {
		lit := Quote(s)
		back, err := strconv.Unquote(lit)
		if err != nil || back != s {
			t.Errorf("Quote(%q) = %s, reads back as %q (%v)", s, lit, back, err)
		}
		if strings.ContainsAny(lit, "\x00\n\t\u2028") {
			t.Errorf("Quote(%q) = %q keeps a raw control character", s, lit)
		}
	}
}

// The printer writes the parentheses CEL's grammar needs and no more:
// an operand that binds looser than its operator, a conditional in a
// condition or a first branch, a same-precedence right operand of a
// left-associative operator; chains of an associative operator flat.
func TestStringParenthesisesByPrecedence(t *testing.T) {
	a, b, c := Id("a"), Id("b"), Id("c")
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{Or(a, And(b, c)), "a || b && c"},
		{And(a, Or(b, c)), "a && (b || c)"},
		{Or(a, Or(b, c)), "a || b || c"},
		{Add(a, Add(b, c)), "a + b + c"},
		{Sub(a, Sub(b, c)), "a - (b - c)"},
		{Sub(Sub(a, b), c), "a - b - c"},
		{Not(And(a, b)), "!(a && b)"},
		{Not(Eq(a, b)), "!(a == b)"},
		{Eq(Add(a, b), c), "a + b == c"},
		{Add(If(a, b, c), Str("x")), `(a ? b : c) + "x"`},
		{If(If(a, b, c), a, b), "(a ? b : c) ? a : b"},
		{If(a, If(a, b, c), b), "a ? (a ? b : c) : b"},
		{If(a, b, If(a, b, c)), "a ? b : a ? b : c"},
		{Add(a, b).M("size"), "(a + b).size()"},
		{Var("x").Opt("y").OptAt(Str("k")).OrValue(MapOf()), `variables.x.?y[?"k"].orValue({})`},
		{List(a, b).Exists("v", func(v Expr) Expr { return Eq(v, Int(1)) }), "[a, b].exists(v, v == 1)"},
		{Record("q", Str(""), "n", Null), `{"q": "", "n": null}`},
		{Struct("JSONPatch", "op", Str("add")), `JSONPatch{op: "add"}`},
		{Cases(Int(0), When(a, Int(1)), When(b, Int(2))), "a ? 1 : b ? 2 : 0"},
		{Or(), "false"},
		{And(), "true"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}
