package kubernetes

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes/cel"
)

// anyMatch is a CEL boolean true when some pattern matches (searches)
// the string subject, as YuniKorn's MatchString; false for no pattern.
// Each pattern is a literal, so the API server compiles and checks it
// once, when the policy is created.
func anyMatch(subject cel.Expr, patterns []string) cel.Expr {
	terms := make([]cel.Expr, len(patterns))
	for i, p := range patterns {
		terms[i] = subject.Matches(p)
	}
	return cel.Or(terms...)
}

// checkPatterns refuses a pattern CEL's matches would not compile: CEL in
// the API server compiles with Go's regexp, as YuniKorn does, so a pattern
// YuniKorn used compiles; a list YuniKorn refused is already its default.
func checkPatterns(st *admission.Settings) error {
	for _, l := range []struct {
		key      string
		patterns []string
	}{
		{admission.KeySystemUsers, st.SystemUsers},
		{admission.KeyExternalUsers, st.ExternalUsers},
		{admission.KeyExternalGroups, st.ExternalGroups},
		{admission.KeyProcessNamespaces, st.ProcessNamespaces},
		{admission.KeyBypassNamespaces, st.BypassNamespaces},
		{admission.KeyLabelNamespaces, st.LabelNamespaces},
		{admission.KeyNoLabelNamespaces, st.NoLabelNamespaces},
	} {
		for _, p := range l.patterns {
			if _, err := regexp.Compile(p); err != nil {
				return fmt.Errorf("kubernetes target: %s: pattern %q does not compile, and CEL's matches would refuse the policy: %w", l.key, p, err)
			}
		}
	}
	return nil
}

// celAppIDLabels is a CEL list of the labels that bring a workload CREATE
// or a pod UPDATE in a processed but unlabelled namespace under YuniKorn's
// user.info check (shouldProcessAdmissionReview): the canonical app-id
// label counts from release 1.6.0.
func celAppIDLabels(st *admission.Settings) cel.Expr {
	if st.Release().Has(release.AppIDLabelNotFiltered) {
		return cel.Strs("applicationId", "spark-app-selector")
	}
	return cel.Strs("yunikorn.apache.org/app-id", "applicationId", "spark-app-selector")
}

// The names the policies' expressions share.
const (
	celUserInfoKey = admission.UserInfoAnnotation
	celEnableKey   = "yunikorn.apache.org/namespace.enableYuniKorn"
	celGenerateKey = "yunikorn.apache.org/namespace.generateAppId"
)

// jsonSpecial finds a character Go's encoding/json escapes in a string.
const jsonSpecial = `[\x00-\x1f"\\<>&\x{2028}\x{2029}]`

// celJSONString is a CEL expression for the JSON string encoding of the
// string x, byte for byte as Go's json.Marshal writes it (the value
// YuniKorn writes): \" and \\, \b \f \n \r \t, \u00XX for the other
// control characters, HTML-safe \u003c \u003e \u0026, and \u2028 \u2029.
// The replacements run only when x holds such a character.
func celJSONString(x cel.Expr) cel.Expr {
	repl := []struct{ from, to string }{{`\`, `\\`}, {`"`, `\"`}, {"\b", `\b`}, {"\f", `\f`}, {"\n", `\n`}, {"\r", `\r`}, {"\t", `\t`}}
	for c := rune(0); c < 0x20; c++ {
		switch c {
		case '\b', '\f', '\n', '\r', '\t':
			continue
		}
		repl = append(repl, struct{ from, to string }{string(c), fmt.Sprintf(`\u%04x`, c)})
	}
	repl = append(repl, struct{ from, to string }{"<", `\u003c`}, struct{ from, to string }{">", `\u003e`}, struct{ from, to string }{"&", `\u0026`},
		struct{ from, to string }{"\u2028", `\u2028`}, struct{ from, to string }{"\u2029", `\u2029`})
	escaped := x
	for _, r := range repl {
		escaped = escaped.Replace(r.from, r.to)
	}
	return cel.Add(cel.Str(`"`), cel.If(x.Matches(jsonSpecial), escaped, x), cel.Str(`"`))
}

// The JSON grammar, as regular expressions: what Go's decoder accepts as
// a value, nested at most a fixed depth (regular expressions cannot count
// brackets).
const (
	jsonWS     = `[ \t\n\r]*`
	jsonChar   = `(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})`
	jsonStr    = `"` + jsonChar + `*"`
	jsonNum    = `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`
	jsonScalar = `(?:` + jsonStr + `|` + jsonNum + `|true|false|null)`
	// userInfoNesting is how deep a field other than user and groups may
	// nest arrays and objects in a pre-set value the policy accepts; Go
	// accepts any depth.
	userInfoNesting = 2
)

// jsonValue is a JSON value nested at most depth arrays or objects deep.
func jsonValue(depth int) string {
	if depth == 0 {
		return jsonScalar
	}
	v := jsonValue(depth - 1)
	member := jsonStr + jsonWS + `:` + jsonWS + v
	return `(?:` + jsonScalar +
		`|\[` + jsonWS + `(?:` + v + `(?:` + jsonWS + `,` + jsonWS + v + `)*)?` + jsonWS + `\]` +
		`|\{` + jsonWS + `(?:` + member + `(?:` + jsonWS + `,` + jsonWS + member + `)*)?` + jsonWS + `\})`
}

// jsonOtherKey is a JSON object key other than the field names user and
// groups in any case (Go matches field names case-insensitively, with
// Unicode's simple folding: the long s folds to s). An escaped letter
// (\u0075ser) counts as another key here, where Go decodes it first.
func jsonOtherKey() string {
	other := func(c byte) string {
		exclude := string(c) + string(c-32)
		if c == 's' {
			exclude += `\x{17f}`
		}
		return `(?:[^"\\\x00-\x1f` + exclude + `]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})`
	}
	// Any length but 4 and 6, or 4 but not user, or 6 but not groups.
	alts := []string{jsonChar + `{0,3}`, jsonChar + `{5}`, jsonChar + `{7,}`}
	for _, word := range []string{"user", "groups"} {
		for i := 0; i < len(word); i++ {
			alts = append(alts, fmt.Sprintf(`%s{%d}%s%s{%d}`, jsonChar, i, other(word[i]), jsonChar, len(word)-i-1))
		}
	}
	return `"(?:` + strings.Join(alts, "|") + `)"`
}

// userInfoGrammar is the regular expression of a pre-set user.info value
// that unmarshals into YuniKorn's UserGroupInformation: null, or an object
// whose user is a string or null, whose groups is null or an array of
// strings and nulls, and whose other fields are any JSON.
func userInfoGrammar() string {
	strOrNull := `(?:` + jsonStr + `|null)`
	groups := `(?:null|\[` + jsonWS + `(?:` + strOrNull + `(?:` + jsonWS + `,` + jsonWS + strOrNull + `)*)?` + jsonWS + `\])`
	member := `(?:"(?i:user)"` + jsonWS + `:` + jsonWS + strOrNull +
		`|"(?i:groups)"` + jsonWS + `:` + jsonWS + groups +
		`|` + jsonOtherKey() + jsonWS + `:` + jsonWS + jsonValue(userInfoNesting) + `)`
	object := `\{` + jsonWS + `(?:` + member + `(?:` + jsonWS + `,` + jsonWS + member + `)*)?` + jsonWS + `\}`
	return `^` + jsonWS + `(?:null|` + object + `)` + jsonWS + `$`
}

// userInfoCanonical is the regular expression of the values YuniKorn
// writes (json.Marshal of UserGroupInformation, compact): a subset of the
// valid ones, checked first because it is short. CEL charges matches by
// the length of the text times the length of the pattern, and the API
// server stops an expression past a fixed cost: the full grammar would
// refuse a pod inheriting the value of a user with a few hundred groups.
func userInfoCanonical() string {
	list := `\[(?:` + jsonStr + `(?:,` + jsonStr + `)*)?\]`
	return `^\{(?:"user":` + jsonStr + `(?:,"groups":` + list + `)?|"groups":` + list + `)?\}$`
}

// jsonGrammar is the regular expression of any JSON document (nested at
// most userInfoNesting+1 deep), for telling syntax errors from type errors.
func jsonGrammar() string {
	return `^` + jsonWS + jsonValue(userInfoNesting+1) + jsonWS + `$`
}

// celPresetTop is a CEL expression for the JSON value the pre-set value
// starts with (white space before it included), "" when it starts with
// none: the message names the character after it. A variable of its own,
// so that its long pattern is written once.
func celPresetTop() cel.Expr {
	return presetValue.Find("^" + jsonWS + jsonValue(userInfoNesting+1))
}

// presetValue is the pre-set user.info value, where the policy has one.
var presetValue = cel.Var("preset").M("value")

// jsonClosers are what the validity message appends to a value that is not
// JSON to tell a truncated one: if one of them completes it, Go's decoder
// met the end of the input inside the value.
var jsonClosers = []string{"}", `"}`, "]}", `"]}`, "null}", ":null}", `":null}`, "]", `"]`, `"`}

// celJSONChecks is a CEL expression for a list of booleans: whether the
// pre-set value is JSON (first), then whether it is with each of
// jsonClosers appended. A variable of its own, so that the long pattern is
// written once.
func celJSONChecks() cel.Expr {
	texts := []cel.Expr{presetValue}
	for _, c := range jsonClosers {
		texts = append(texts, cel.Add(presetValue, cel.Str(c)))
	}
	return cel.List(texts...).Map("t", func(t cel.Expr) cel.Expr { return t.Matches(jsonGrammar()) })
}

// celValidityMessage is a CEL expression (over variables.preset, a string,
// variables.presetTop and variables.jsonChecks) for the text of Go's
// decoder error on an invalid value, as YuniKorn denies it: the end of
// input (a value the closers complete), a character that starts no value,
// a character after the top-level value, an object key that is not a
// string, and a value of the wrong JSON type for the whole or for user and
// groups. Other errors (inside a string, a number, an unknown field) are
// worded generically.
func celValidityMessage() cel.Expr {
	v := presetValue
	const ws = `[ \t\n\r]`
	first := v.Find(`[^ \t\n\r]`)
	quoteChar := cel.Cases(cel.Add(cel.Str("'"), first, cel.Str("'")),
		cel.When(cel.Eq(first, cel.Str("'")), cel.Str(`'\\''`)),
		cel.When(cel.Eq(first, cel.Str(`"`)), cel.Str(`'"'`)))
	typeOf := func(prefix cel.Expr) cel.Expr {
		return cel.Cases(cel.Str("object"),
			cel.When(prefix.Matches(`^[\[]`), cel.Str("array")),
			cel.When(prefix.Matches(`^["]`), cel.Str("string")),
			cel.When(prefix.Matches(`^[-0-9]`), cel.Str("number")),
			cel.When(prefix.Matches(`^[tf]`), cel.Str("bool")))
	}
	after := v.M("substring", cel.Size(cel.Var("presetTop")))
	// The first character after an opening brace.
	brace := cel.Size(v.Find("^" + ws + "*[{]" + ws + "*"))
	keyChar := v.M("substring", brace, cel.Add(brace, cel.Int(1)))
	afterChar := after.Find(`[^ \t\n\r]`)
	// The last character of what a pattern finds.
	last := func(found cel.Expr) cel.Expr { return found.M("substring", cel.Sub(cel.Size(found), cel.Int(1))) }
	fieldType := func(field, goType string) cel.Expr {
		// The first character of the field's value.
		find := v.Find(`"(?i:` + field + `)"` + jsonWS + `:` + jsonWS + `[\[\{"tf0-9-]`)
		return cel.Add(cel.Str("json: cannot unmarshal "), typeOf(last(find)), cel.Str(" into Go struct field UserGroupInformation."+field+" of type "+goType))
	}
	groupElem := v.Find(`"(?i:groups)"` + jsonWS + `:` + jsonWS + `\[` + jsonWS + `(?:(?:` + jsonStr + `|null)` + jsonWS + `,` + jsonWS + `)*[\[\{tf0-9-]`)
	return cel.Cases(cel.Str("invalid JSON in user.info"),
		cel.When(v.Matches("^"+ws+"*$"), cel.Str("unexpected end of JSON input")),
		cel.When(cel.Not(v.Matches("^"+ws+`*[\[{"tfn0-9-]`)), cel.Add(cel.Str("invalid character "), quoteChar, cel.Str(" looking for beginning of value"))),
		cel.When(v.Matches("^"+ws+"*[{]"+ws+`*[^ \t\n\r"}]`), cel.Add(cel.Str("invalid character '"), keyChar, cel.Str("' looking for beginning of object key string"))),
		cel.When(cel.Not(cel.Var("jsonChecks").At(cel.Int(0))), cel.Cases(cel.Str("invalid JSON in user.info"),
			cel.When(cel.And(cel.Ne(cel.Var("presetTop"), cel.Str("")), cel.Ne(afterChar, cel.Str(""))), cel.Add(cel.Str("invalid character '"), afterChar, cel.Str("' after top-level value"))),
			cel.When(cel.Var("jsonChecks").Exists("b", func(b cel.Expr) cel.Expr { return b }), cel.Str("unexpected end of JSON input")))),
		cel.When(v.Matches("^"+ws+`*[^ \t\n\r{n]`), cel.Add(cel.Str("json: cannot unmarshal "), typeOf(v.M("substring", cel.Size(v.Find("^"+ws+"*")))), cel.Str(" into Go value of type si.UserGroupInformation"))),
		cel.When(v.Matches(`"(?i:user)"`+jsonWS+`:`+jsonWS+`[\[\{tf0-9-]`), fieldType("user", "string")),
		cel.When(v.Matches(`"(?i:groups)"`+jsonWS+`:`+jsonWS+`[\{"tf0-9-]`), fieldType("groups", "[]string")),
		cel.When(cel.Ne(groupElem, cel.Str("")), cel.Add(cel.Str("json: cannot unmarshal "), typeOf(last(groupElem)), cel.Str(" into Go struct field UserGroupInformation.groups of type string"))))
}

// celUserInfoValue is a CEL expression for the user.info value YuniKorn
// writes for the string expression user and the list expression groups:
// json.Marshal of {user, groups}, compact, each left out when empty. The
// mutating policy adds it; the policies read a pre-set value only when it
// is this of what they decoded from it.
func celUserInfoValue(user, groups cel.Expr) cel.Expr {
	hasUser, hasGroups := cel.Ne(user, cel.Str("")), cel.Gt(cel.Size(groups), cel.Int(0))
	return cel.Add(cel.Str("{"),
		cel.If(hasUser, cel.Add(cel.Str(`"user":`), celJSONString(user)), cel.Str("")),
		cel.If(cel.And(hasUser, hasGroups), cel.Str(","), cel.Str("")),
		cel.If(hasGroups, cel.Add(cel.Str(`"groups":[`), groups.Map("g", celJSONString).M("join", cel.Str(",")), cel.Str("]")), cel.Str("")),
		cel.Str("}"))
}

// celCompactMessage refuses a pre-set user.info the policies cannot read
// exactly: valid JSON, but not in the compact form YuniKorn writes.
const celCompactMessage = `yunikorn.apache.org/user.info is not in the form YuniKorn writes it: aclc's Kubernetes policies read yunikorn.apache.org/user.info only in the compact form YuniKorn writes, e.g. {"user":"alice","groups":["dev"]}`
