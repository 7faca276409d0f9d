package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/wasm"
)

// topdown evaluates entrypoints of a policy with OPA's topdown evaluator.
type topdown struct {
	queries map[string]rego.PreparedEvalQuery
}

// echoFunction is the topdown implementation of aclc.test_echo, the twin of
// echo.
var echoFunction = rego.Function1(
	&rego.Function{Name: echoBuiltin.Name, Decl: echoBuiltin.Decl},
	func(_ rego.BuiltinContext, a *ast.Term) (*ast.Term, error) {
		s, ok := a.Value.(ast.String)
		if !ok {
			return nil, errors.New("not a string")
		}
		return ast.StringTerm("echo:" + string(s)), nil
	})

func newTopdown(tb testing.TB, modules map[string]string, data string, entrypoints ...string) *topdown {
	tb.Helper()
	var store map[string]any
	if data == "" {
		data = "{}"
	}
	if err := util.UnmarshalJSON([]byte(data), &store); err != nil {
		tb.Fatal(err)
	}
	td := &topdown{queries: map[string]rego.PreparedEvalQuery{}}
	for _, ep := range entrypoints {
		opts := []func(*rego.Rego){
			rego.Query("data." + strings.ReplaceAll(ep, "/", ".")),
			rego.Store(inmem.NewFromObject(store)),
			echoFunction,
		}
		for name, src := range modules {
			opts = append(opts, rego.Module(name, src))
		}
		pq, err := rego.New(opts...).PrepareForEval(context.Background())
		if err != nil {
			tb.Fatalf("prepare %s: %v", ep, err)
		}
		td.queries[ep] = pq
	}
	return td
}

// eval returns the JSON value of the entrypoint, ErrUndefined, or the
// evaluation error.
func (td *topdown) eval(ep string, input []byte) (json.RawMessage, error) {
	var opts []rego.EvalOption
	if len(input) > 0 {
		var in any
		if err := util.UnmarshalJSON(input, &in); err != nil {
			return nil, err
		}
		opts = append(opts, rego.EvalInput(in))
	}
	rs, err := td.queries[ep].Eval(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, wasm.ErrUndefined
	}
	return json.Marshal(rs[0].Expressions[0].Value)
}

type crossCase struct {
	name        string
	modules     map[string]string
	data        string
	entrypoints []string
	inputs      []string
}

var crossCases = []crossCase{
	{
		name: "authz with data lookups",
		modules: map[string]string{"authz.rego": `package authz
default allow := false
allow if {
	some role in data.users[input.user].roles
	data.permissions[role][input.action]
}
allow if input.user == data.superuser
roles := data.users[input.user].roles
`},
		data:        `{"superuser":"root","users":{"alice":{"roles":["admin"]},"bob":{"roles":["viewer","auditor"]}},"permissions":{"admin":{"read":true,"write":true},"viewer":{"read":true},"auditor":{"audit":true}}}`,
		entrypoints: []string{"authz/allow", "authz/roles"},
		inputs: []string{
			`{"user":"alice","action":"write"}`, `{"user":"bob","action":"write"}`,
			`{"user":"bob","action":"audit"}`, `{"user":"root","action":"anything"}`,
			`{"user":"eve","action":"read"}`, `{}`, ``, `[1,2]`, `{"user":7}`,
		},
	},
	{
		name: "object-key lookups in data",
		modules: map[string]string{"lookup.rego": `package lookup
team := data.teams[input.team]
member if data.teams[input.team].members[input.user]
lead := data.teams[input.team].lead
quota := object.get(data.quotas, input.team, 0)
`},
		data:        `{"teams":{"core":{"lead":"ann","members":{"ann":true,"bo":true}},"infra":{"lead":"cy","members":{"cy":true}}},"quotas":{"core":10,"infra":2.5}}`,
		entrypoints: []string{"lookup/team", "lookup/member", "lookup/lead", "lookup/quota"},
		inputs: []string{
			`{"team":"core","user":"bo"}`, `{"team":"infra","user":"bo"}`,
			`{"team":"none","user":"bo"}`, `{"team":["core"]}`, `{}`,
		},
	},
	{
		name: "sets",
		modules: map[string]string{"sets.rego": `package sets
groups contains g if some g in data.users[input.user].groups
shared := {g | some g in data.users[input.a].groups} & {g | some g in data.users[input.b].groups}
all := {g | some g in data.users[input.a].groups} | {g | some g in data.users[input.b].groups}
only_a := {g | some g in data.users[input.a].groups} - {g | some g in data.users[input.b].groups}
is_member if "dev" in groups
`},
		data:        `{"users":{"a":{"groups":["dev","ops","dev"]},"b":{"groups":["ops","qa"]},"c":{"groups":[]}}}`,
		entrypoints: []string{"sets/groups", "sets/shared", "sets/all", "sets/only_a", "sets/is_member"},
		inputs: []string{
			`{"user":"a","a":"a","b":"b"}`, `{"user":"b","a":"b","b":"c"}`,
			`{"user":"c","a":"c","b":"c"}`, `{"user":"x","a":"x","b":"a"}`,
		},
	},
	{
		name: "arrays",
		modules: map[string]string{"arrays.rego": `package arrays
big := [x | some x in input.items; x > 1]
n := count(input.items)
sorted := sort(input.items)
total := sum(input.items)
doubled := [y | some x in input.items; y := x * 2]
first := input.items[0]
idx := [i | some i, x in input.items; x == 3]
`},
		entrypoints: []string{"arrays/big", "arrays/n", "arrays/sorted", "arrays/total", "arrays/doubled", "arrays/first", "arrays/idx"},
		inputs: []string{
			`{"items":[3,1,2,3]}`, `{"items":[]}`, `{"items":[1.5,-2,10]}`, `{"items":"nope"}`, `{}`,
		},
	},
	{
		name: "string builtins",
		modules: map[string]string{"strs.rego": `package strs
full := concat("/", [lower(input.a), trim_left(input.b, "/")])
api if startswith(input.path, "/api/")
parts := split(input.path, "/")
upper_a := upper(input.a)
ends if endswith(input.path, ".json")
has := contains(input.path, "v1")
trimmed := trim_space(input.b)
rep := replace(input.path, "/", ":")
idx := indexof(input.path, "v")
sub := substring(input.a, 1, 3)
`},
		entrypoints: []string{"strs/full", "strs/api", "strs/parts", "strs/upper_a", "strs/ends", "strs/has", "strs/trimmed", "strs/rep", "strs/idx", "strs/sub"},
		inputs: []string{
			`{"a":"HeLLo","b":"//x/y","path":"/api/v1/items.json"}`,
			`{"a":"ÄÖÜ straße","b":"  spaced  ","path":"/web/index.html"}`,
			`{"a":"","b":"","path":""}`,
			`{"a":"esc\"aped\\n\u00e9","b":"/","path":"/"}`,
			`{"a":1,"b":true,"path":null}`,
		},
	},
	{
		// Rules are memoized per frame; each with statement opens a frame
		// and must not see, nor leak, the results of the enclosing one.
		name: "memoized rules under with",
		modules: map[string]string{"memo.rego": `package memo
role := data.roles[input.user]
default admin := false
admin if role == "admin"
both := [a, b, c, d, e] if {
	a := admin
	b := admin with input.user as "root"
	c := admin
	d := role with data.roles as {"alice": "guest", "bob": "guest"}
	e := role
}
nested := [a, b, c] if {
	a := role
	b := inner with data.roles.root as "ops"
	c := role
}
inner := [x, y, z] if {
	x := role with input.user as "root"
	y := deeper with input.user as "bob"
	z := role
}
deeper := [p, q] if {
	p := role with data.roles.bob as "x"
	q := role
}
count_admins := count([u | some u, _ in data.roles; admin with input.user as u])
`},
		data:        `{"roles":{"alice":"admin","bob":"viewer","root":"admin"}}`,
		entrypoints: []string{"memo/both", "memo/nested", "memo/count_admins", "memo/admin"},
		inputs:      []string{`{"user":"alice"}`, `{"user":"bob"}`, `{"user":"root"}`, `{}`},
	},
	{
		name: "custom builtin",
		modules: map[string]string{"ext.rego": `package ext
echoed := aclc.test_echo(input.name)
greeting := concat(" ", ["hi", aclc.test_echo(lower(input.name))])
`},
		entrypoints: []string{"ext/echoed", "ext/greeting"},
		inputs:      []string{`{"name":"Alice"}`, `{"name":""}`, `{"name":5}`, `{}`},
	},
}

// TestCrossCheckAgainstTopdown evaluates the same policies and inputs with
// this host and with OPA's topdown evaluator and compares the JSON values.
func TestCrossCheckAgainstTopdown(t *testing.T) {
	ctx := context.Background()
	cfg := wasm.NewConfig().WithBuiltins(map[string]wasm.BuiltinFunc{"aclc.test_echo": echo})
	for _, c := range crossCases {
		t.Run(c.name, func(t *testing.T) {
			p := mustLoad(t, buildWasmBundle(t, c.modules, c.data, c.entrypoints...), cfg)
			td := newTopdown(t, c.modules, c.data, c.entrypoints...)
			for _, ep := range c.entrypoints {
				for _, in := range c.inputs {
					got, gerr := p.Eval(ctx, ep, []byte(in))
					want, werr := td.eval(ep, []byte(in))
					if werr != nil && !errors.Is(werr, wasm.ErrUndefined) {
						t.Fatalf("%s %s: topdown: %v", ep, in, werr)
					}
					switch {
					case errors.Is(werr, wasm.ErrUndefined) && errors.Is(gerr, wasm.ErrUndefined):
					case gerr != nil || werr != nil:
						t.Errorf("%s %s: wasm %s, %v; topdown %s, %v", ep, in, got, gerr, want, werr)
					case !jsonEqual(t, got, want):
						t.Errorf("%s %s: wasm %s, topdown %s", ep, in, got, want)
					}
				}
			}
		})
	}
}
