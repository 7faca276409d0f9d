// Package cel builds the CEL expressions of the kubernetes target as
// trees and prints them: literals are escaped and operands parenthesised
// here, so that no expression is pieced together from text.
package cel

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Expr is a CEL expression as a tree: every expression the policies hold
// is built from these nodes and printed by String, which writes each
// literal with CEL's escapes and each operand in parentheses where CEL's
// grammar needs them. No expression is pieced together from text.
type Expr struct {
	kind exprKind
	// name is the identifier, field, function or operator; the literal's
	// printed form for a literal; the type name for an object.
	name string
	// args are the operands: the receiver first for a field, an index or
	// a method; for a map or an object, keys and values in turn.
	args []Expr
}

type exprKind uint8

const (
	kindLiteral exprKind = iota + 1
	kindIdent
	kindSelect    // x.f
	kindOptSelect // x.?f
	kindIndex     // x[k]
	kindOptIndex  // x[?k]
	kindCall      // f(a, ...)
	kindMethod    // x.f(a, ...), macros included
	kindUnary     // !x
	kindBinary    // x op y op ...
	kindCond      // c ? t : e
	kindList      // [a, ...]
	kindMap       // {k: v, ...}
	kindObject    // T{f: v, ...}
)

// Literals.

// Str is the string literal of s.
func Str(s string) Expr { return Expr{kind: kindLiteral, name: Quote(s)} }

// Bool is the boolean literal of b.
func Bool(b bool) Expr { return Expr{kind: kindLiteral, name: strconv.FormatBool(b)} }

// Int is the integer literal of n.
func Int(n int) Expr { return Expr{kind: kindLiteral, name: strconv.Itoa(n)} }

// Null is null.
var Null = Expr{kind: kindLiteral, name: "null"}

// True and False are the boolean literals.
var (
	True  = Bool(true)
	False = Bool(false)
)

// Names.

// Id is the identifier name: a variable the API server declares (object,
// request, ...) or one a macro binds.
func Id(name string) Expr { return Expr{kind: kindIdent, name: name} }

// Var is variables.name, a variable of the policy.
func Var(name string) Expr { return Id("variables").F(name) }

// F is x.name.
func (x Expr) F(name string) Expr { return Expr{kind: kindSelect, name: name, args: []Expr{x}} }

// Opt is x.?name, an optional of the field.
func (x Expr) Opt(name string) Expr { return Expr{kind: kindOptSelect, name: name, args: []Expr{x}} }

// At is x[k].
func (x Expr) At(k Expr) Expr { return Expr{kind: kindIndex, args: []Expr{x, k}} }

// OptAt is x[?k], an optional of the entry.
func (x Expr) OptAt(k Expr) Expr { return Expr{kind: kindOptIndex, args: []Expr{x, k}} }

// M is the method call x.name(args...): a macro (exists, all, map,
// filter) takes the name it binds as Id.
func (x Expr) M(name string, args ...Expr) Expr {
	return Expr{kind: kindMethod, name: name, args: append([]Expr{x}, args...)}
}

// Call is the function call name(args...).
func Call(name string, args ...Expr) Expr { return Expr{kind: kindCall, name: name, args: args} }

// Methods the expressions use often.

// OrValue is x.orValue(v), the optional x's value or v.
func (x Expr) OrValue(v Expr) Expr { return x.M("orValue", v) }

// Matches is x.matches(pattern), the pattern a literal.
func (x Expr) Matches(pattern string) Expr { return x.M("matches", Str(pattern)) }

// Find is x.find(pattern), the pattern a literal.
func (x Expr) Find(pattern string) Expr { return x.M("find", Str(pattern)) }

// Replace is x.replace(from, to), both literals.
func (x Expr) Replace(from, to string) Expr { return x.M("replace", Str(from), Str(to)) }

// Size is size(x).
func Size(x Expr) Expr { return Call("size", x) }

// String is string(x), a conversion (or a type assertion for dyn).
func String(x Expr) Expr { return Call("string", x) }

// Exists is x.exists(v, body), with body over Id(v).
func (x Expr) Exists(v string, body func(Expr) Expr) Expr { return x.M("exists", Id(v), body(Id(v))) }

// All is x.all(v, body).
func (x Expr) All(v string, body func(Expr) Expr) Expr { return x.M("all", Id(v), body(Id(v))) }

// Map is x.map(v, body).
func (x Expr) Map(v string, body func(Expr) Expr) Expr { return x.M("map", Id(v), body(Id(v))) }

// Filter is x.filter(v, body).
func (x Expr) Filter(v string, body func(Expr) Expr) Expr { return x.M("filter", Id(v), body(Id(v))) }

// Operators.

// Not is !x.
func Not(x Expr) Expr { return Expr{kind: kindUnary, name: "!", args: []Expr{x}} }

// Or is x || y || ...; false for none.
func Or(xs ...Expr) Expr { return nary("||", False, xs) }

// And is x && y && ...; true for none.
func And(xs ...Expr) Expr { return nary("&&", True, xs) }

// Add is x + y + ...: concatenation of strings or lists, or a sum.
func Add(xs ...Expr) Expr { return nary("+", Str(""), xs) }

func nary(op string, none Expr, xs []Expr) Expr {
	switch len(xs) {
	case 0:
		return none
	case 1:
		return xs[0]
	}
	// The operators are associative: an operand of the same operator is
	// spliced in, so that a chain prints without parentheses.
	var args []Expr
	for _, x := range xs {
		if x.kind == kindBinary && x.name == op {
			args = append(args, x.args...)
			continue
		}
		args = append(args, x)
	}
	return Expr{kind: kindBinary, name: op, args: args}
}

func binary(op string, x, y Expr) Expr { return Expr{kind: kindBinary, name: op, args: []Expr{x, y}} }

// Eq is x == y.
func Eq(x, y Expr) Expr { return binary("==", x, y) }

// Ne is x != y.
func Ne(x, y Expr) Expr { return binary("!=", x, y) }

// Lt is x < y.
func Lt(x, y Expr) Expr { return binary("<", x, y) }

// Gt is x > y.
func Gt(x, y Expr) Expr { return binary(">", x, y) }

// Ge is x >= y.
func Ge(x, y Expr) Expr { return binary(">=", x, y) }

// In is x in y.
func In(x, y Expr) Expr { return binary("in", x, y) }

// Sub is x - y.
func Sub(x, y Expr) Expr { return binary("-", x, y) }

// If is c ? t : e.
func If(c, t, e Expr) Expr { return Expr{kind: kindCond, args: []Expr{c, t, e}} }

// Cases is a chain of conditionals: the value of the first case whose
// condition holds, else otherwise.
func Cases(otherwise Expr, cases ...Case) Expr {
	out := otherwise
	for i := len(cases) - 1; i >= 0; i-- {
		out = If(cases[i].When, cases[i].Then, out)
	}
	return out
}

// Case is one condition of Cases and its value.
type Case struct{ When, Then Expr }

// Composites.

// List is [xs...].
func List(xs ...Expr) Expr { return Expr{kind: kindList, args: xs} }

// Strs is the list literal of the strings.
func Strs(xs ...string) Expr {
	out := make([]Expr, len(xs))
	for i, x := range xs {
		out[i] = Str(x)
	}
	return List(out...)
}

// MapOf is the map literal {k: v, ...} of entries.
func MapOf(entries ...Entry) Expr {
	args := make([]Expr, 0, 2*len(entries))
	for _, e := range entries {
		args = append(args, e.Key, e.Value)
	}
	return Expr{kind: kindMap, args: args}
}

// Entry is one entry of a map literal, or one field of an object.
type Entry struct{ Key, Value Expr }

// Record is the map literal of string keys {"k": v, ...}: kv are keys
// and values in turn.
func Record(kv ...any) Expr {
	entries := make([]Entry, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		entries = append(entries, Entry{Str(kv[i].(string)), kv[i+1].(Expr)})
	}
	return MapOf(entries...)
}

// Struct is the message literal typ{field: v, ...}: kv are field names
// and values in turn.
func Struct(typ string, kv ...any) Expr {
	args := make([]Expr, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		args = append(args, Id(kv[i].(string)), kv[i+1].(Expr))
	}
	return Expr{kind: kindObject, name: typ, args: args}
}

// Printing.

// The precedence of each form, loosest first, as CEL's grammar nests
// them.
const (
	precCond = iota + 1
	precOr
	precAnd
	precRelation
	precAdd
	precMul
	precUnary
	precMember
	precPrimary
)

func (x Expr) prec() int {
	switch x.kind {
	case kindCond:
		return precCond
	case kindBinary:
		switch x.name {
		case "||":
			return precOr
		case "&&":
			return precAnd
		case "+", "-":
			return precAdd
		case "*", "/", "%":
			return precMul
		}
		return precRelation
	case kindUnary:
		return precUnary
	case kindSelect, kindOptSelect, kindIndex, kindOptIndex, kindMethod:
		return precMember
	}
	return precPrimary
}

// String is the expression as CEL text.
func (x Expr) String() string {
	var b strings.Builder
	x.write(&b)
	return b.String()
}

// Len is the length of the expression's text in code points, what CEL's
// parser limits.
func (x Expr) Len() int { return utf8.RuneCountInString(x.String()) }

// operand writes y, in parentheses when it binds looser than min.
func operand(b *strings.Builder, y Expr, min int) {
	if y.prec() < min {
		b.WriteByte('(')
		y.write(b)
		b.WriteByte(')')
		return
	}
	y.write(b)
}

func writeList(b *strings.Builder, xs []Expr) {
	for i, y := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		y.write(b)
	}
}

func (x Expr) write(b *strings.Builder) {
	switch x.kind {
	case kindLiteral, kindIdent:
		b.WriteString(x.name)
	case kindSelect, kindOptSelect:
		operand(b, x.args[0], precMember)
		b.WriteByte('.')
		if x.kind == kindOptSelect {
			b.WriteByte('?')
		}
		b.WriteString(x.name)
	case kindIndex, kindOptIndex:
		operand(b, x.args[0], precMember)
		b.WriteByte('[')
		if x.kind == kindOptIndex {
			b.WriteByte('?')
		}
		x.args[1].write(b)
		b.WriteByte(']')
	case kindMethod:
		operand(b, x.args[0], precMember)
		b.WriteByte('.')
		b.WriteString(x.name)
		b.WriteByte('(')
		writeList(b, x.args[1:])
		b.WriteByte(')')
	case kindCall:
		b.WriteString(x.name)
		b.WriteByte('(')
		writeList(b, x.args)
		b.WriteByte(')')
	case kindUnary:
		b.WriteString(x.name)
		operand(b, x.args[0], precUnary)
	case kindBinary:
		p := x.prec()
		for i, y := range x.args {
			if i > 0 {
				b.WriteString(" " + x.name + " ")
			}
			// Left-associative: a right operand of the same precedence
			// takes parentheses, except for the associative || and &&.
			min := p
			if i > 0 && p != precOr && p != precAnd {
				min = p + 1
			}
			operand(b, y, min)
		}
	case kindCond:
		// The condition and the first branch are no conditional in CEL's
		// grammar; the second branch may be one.
		operand(b, x.args[0], precOr)
		b.WriteString(" ? ")
		operand(b, x.args[1], precOr)
		b.WriteString(" : ")
		x.args[2].write(b)
	case kindList:
		b.WriteByte('[')
		writeList(b, x.args)
		b.WriteByte(']')
	case kindMap, kindObject:
		b.WriteString(x.name)
		b.WriteByte('{')
		for i := 0; i+1 < len(x.args); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			x.args[i].write(b)
			b.WriteString(": ")
			x.args[i+1].write(b)
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("cel: an expression of no kind: %#v", x))
	}
}

// Quote is s as a CEL string literal. CEL's escapes are those of Go's
// interpreted strings, so control characters, the line and paragraph
// separators and invalid bytes are written as escapes, everything else as
// itself.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// When is the case of Cases whose value is then when cond holds.
func When(cond, then Expr) Case { return Case{When: cond, Then: then} }

// KV is the entry of MapOf of key to value.
func KV(key, value Expr) Entry { return Entry{Key: key, Value: value} }
