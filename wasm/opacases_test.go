package wasm_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/test/cases"
	opatopdown "github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
	"github.com/open-policy-agent/opa/v1/types"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/wasm"
)

// minOPACases is the number of OPA test cases TestOPACases must check in
// a sampled run; fewer means the corpus or the sample changed under the
// test. A run of the whole corpus must check every case that is not an
// exception.
const minOPACases = 250

// opaCasesSample is the share of the corpus a sampled run checks: the
// cases whose note hashes to 0 modulo opaCasesSample, and every case of
// exactCases.
const opaCasesSample = 8

// exactCases are the cases that pin how values cross the host's
// boundaries: sets in results, sets given to and returned by host
// builtins, sets in the input, and number literals such as .5 (the
// module keeps a literal's Rego text, which is not JSON). A sampled run
// always checks them.
var exactCases = []string{
	"baseandvirtualdocs/base/virtual: set",
	"containskeyword/ordinary deny rule",
	"defaultkeyword/set comprehension",
	"objectkeys/*",
	"refheads/general, set leaf*",
	"regression/virtual-cache key scope",
	"withkeyword/invalidate comprehension cache",
	"withkeyword/with virtual doc exact value",
	"jsonpatch/set-success *",
	"netcidrcontainsmatches/sets of *",
	"subset/nested object subset 3",
	"net.lookup_ip_addr/localhost",
	"providers-aws-sign_req/*",
	"inputvalues/input set",
	"sprintf/float/zero_fraction",
	"time/time caching",
}

// TestOPACases runs OPA's own conformance cases
// (v1/test/cases/testdata/v1 of the OPA module) on this host, compiled to
// Wasm as OPA's Wasm end-to-end test compiles them (rego.Compile of the
// case's query), and checks every result against the case's want_result,
// want_defined or want_error_code with that test's rules: results as sets
// of bindings, a binding's array sorted when the case sorts bindings, and
// an error case that only strict builtin errors would raise undefined
// (Wasm has no strict mode). Each case runs twice: with the host's module
// rewrites — memoization (internal/memo), regex.match served by the host
// (internal/reroute) and the merge sort (opasort) — and without them.
//
// The only cases skipped are those OPA's Wasm exceptions list skips
// (internal/wasm/sdk/test/e2e/exceptions.yaml), for its engine too. The
// builtins OPA does not compile into the module are served by OPA's
// topdown implementations as OPA's Wasm engine serves them: over Rego
// values (wasm.ValueBuiltinFunc), with one builtin context per evaluation.
//
// By default a deterministic sample runs (see opaCasesSample), on wazero's
// interpreter, whose compilation is several times faster than the
// compiler's. ACLC_OPA_CASES=all runs the whole corpus, and
// ACLC_OPA_CASES_COMPILER=1 runs on the compiler (make wasm-opa-corpus
// does both).
func TestOPACases(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles hundreds of policies")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/open-policy-agent/opa").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	opaDir := strings.TrimSpace(string(out))
	exceptions := map[string]string{}
	b, err := os.ReadFile(filepath.Join(opaDir, "internal/wasm/sdk/test/e2e/exceptions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := util.Unmarshal(b, &exceptions); err != nil {
		t.Fatal(err)
	}
	set, err := cases.Load(filepath.Join(opaDir, "v1/test/cases/testdata/v1"))
	if err != nil {
		t.Fatal(err)
	}
	all := os.Getenv("ACLC_OPA_CASES") == "all"

	cfg := wasm.NewConfig().WithPoolSize(1).WithValueBuiltins(topdownBuiltins())
	if os.Getenv("ACLC_OPA_CASES_COMPILER") == "" {
		cfg = wasm.WithInterpreter(cfg)
	}
	variants := []struct {
		name string
		cfg  func(wasm.Config) wasm.Config
	}{
		// With the rewrites, values cross the boundary in the module's
		// layout, each checked against the guest's own parse and dump;
		// without them, as text through opa_eval.
		{"rewritten", func(c wasm.Config) wasm.Config { return wasm.WithLayoutCheck(c) }},
		{"as compiled", func(c wasm.Config) wasm.Config {
			return wasm.WithoutDirect(wasm.WithoutSortRewrite(wasm.WithoutRegexRoute(wasm.WithoutMemoRewrite(c))))
		}},
	}
	var total, checked, excepted, rewritten, regexCalls, noRoute atomic.Int64
	t.Run("cases", func(t *testing.T) {
		for _, tc := range set.Sorted().Cases {
			total.Add(1)
			if !all && !inSample(tc.Note) {
				continue
			}
			t.Run(tc.Note, func(t *testing.T) {
				if isException(exceptions, tc.Note) {
					excepted.Add(1)
					t.Skip("in OPA's Wasm exceptions")
				}
				if len(tc.Env) == 0 {
					t.Parallel()
				}
				for k, v := range tc.Env {
					t.Setenv(k, v)
				}
				module, err := compileCase(tc)
				if err != nil {
					t.Fatalf("compile: %v", err)
				}
				input, err := caseInput(tc)
				if err != nil {
					t.Fatalf("input: %v", err)
				}
				checked.Add(1)
				for _, v := range variants {
					c := v.cfg(cfg)
					if tc.Data != nil {
						data, err := json.Marshal(*tc.Data)
						if err != nil {
							t.Fatal(err)
						}
						c = c.WithData(data)
					}
					calls := &regexCalls
					if v.name != "rewritten" {
						calls = &noRoute
					}
					res, memoized, err := evalCase(module, c, input, calls)
					if v.name == "rewritten" && memoized {
						rewritten.Add(1)
					}
					if msg := checkCase(tc, res, err); msg != "" {
						t.Errorf("%s: %s", v.name, msg)
					}
				}
			})
		}
	})
	t.Logf("OPA cases: %d of %d checked with and without the rewrites (%d of them rewritten; %d regex.match calls served by the host); %d skipped as OPA's Wasm exceptions",
		checked.Load(), total.Load(), rewritten.Load(), regexCalls.Load(), excepted.Load())
	if noRoute.Load() != 0 {
		t.Errorf("the host served %d regex.match calls without the rewrite", noRoute.Load())
	}
	if all {
		if n, want := checked.Load(), total.Load()-excepted.Load(); n != want {
			t.Errorf("checked %d OPA cases, want all %d that are not exceptions", n, want)
		}
		if regexCalls.Load() < 40 {
			t.Errorf("the host served %d regex.match calls, want OPA's regex cases to go through it", regexCalls.Load())
		}
	} else if n := checked.Load(); n < minOPACases {
		t.Errorf("checked %d OPA cases, want at least %d", n, minOPACases)
	}
	if r, n := rewritten.Load(), checked.Load(); r < n*9/10 {
		t.Errorf("only %d of %d modules were rewritten", r, n)
	}
}

// inSample reports whether a sampled run checks the case.
func inSample(note string) bool {
	for _, pattern := range exactCases {
		if ok, _ := path.Match(pattern, note); ok || pattern == note {
			return true
		}
	}
	h := fnv.New32a()
	h.Write([]byte(note))
	return h.Sum32()%opaCasesSample == 0
}

func isException(exceptions map[string]string, note string) bool {
	if _, ok := exceptions[note]; ok {
		return true
	}
	for pattern := range exceptions {
		if strings.Contains(pattern, "*") {
			if ok, _ := path.Match(pattern, note); ok {
				return true
			}
		}
	}
	return false
}

// checkCase checks the JSON result set (or error) of a case against what
// the case wants, as OPA's Wasm end-to-end test checks its engine's; it
// returns what is wrong, or "".
func checkCase(tc cases.TestCase, res []byte, err error) string {
	switch {
	case tc.WantDefined != nil:
		if err != nil {
			return fmt.Sprintf("unexpected error: %v", err)
		}
		rs, msg := resultSet(res, false)
		if msg != "" {
			return msg
		}
		if got := rs.Len() > 0; got != *tc.WantDefined {
			return fmt.Sprintf("defined: got %v, want %v", got, *tc.WantDefined)
		}
	case tc.WantResult != nil:
		if err != nil {
			return fmt.Sprintf("unexpected error: %v", err)
		}
		return compareResultSet(*tc.WantResult, tc.SortBindings, res)
	case tc.WantErrorCode != nil || tc.WantError != nil:
		if tc.StrictError {
			// Only strict builtin errors raise it: undefined in Wasm.
			if err != nil {
				return fmt.Sprintf("unexpected error: %v", err)
			}
			return compareResultSet(nil, false, res)
		}
		if err == nil {
			return fmt.Sprintf("got result %s, want an error", res)
		}
		code := ""
		if tc.WantErrorCode != nil {
			code = *tc.WantErrorCode
		}
		if code != "eval_conflict_error" {
			return fmt.Sprintf("unmatched error: %v (want %s)", err, code)
		}
		if !strings.Contains(err.Error(), "var assignment conflict") && !strings.Contains(err.Error(), "object insert conflict") {
			return fmt.Sprintf("error %q is no conflict error", err)
		}
	}
	return ""
}

// resultSet reads a JSON result set into a set of binding objects, each
// array value sorted when sortBindings is set.
func resultSet(res []byte, sortBindings bool) (ast.Set, string) {
	var bindings []map[string]any
	if err := util.UnmarshalJSON(res, &bindings); err != nil {
		return nil, fmt.Sprintf("result set %s: %v", res, err)
	}
	got := ast.NewSet()
	for _, b := range bindings {
		obj := ast.NewObject()
		for k, v := range b {
			val, err := ast.InterfaceToValue(v)
			if err != nil {
				return nil, fmt.Sprintf("result set %s: %v", res, err)
			}
			if a, ok := val.(*ast.Array); ok && sortBindings {
				val = a.Sorted()
			}
			obj.Insert(ast.StringTerm(k), ast.NewTerm(val))
		}
		got.Add(ast.NewTerm(obj))
	}
	return got, ""
}

func compareResultSet(want []map[string]any, sortBindings bool, res []byte) string {
	exp := ast.NewSet()
	for _, b := range want {
		obj := ast.NewObject()
		for k, v := range b {
			obj.Insert(ast.StringTerm(k), ast.NewTerm(ast.MustInterfaceToValue(v)))
		}
		exp.Add(ast.NewTerm(obj))
	}
	got, msg := resultSet(res, sortBindings)
	if msg != "" {
		return msg
	}
	if exp.Compare(got) != 0 {
		return fmt.Sprintf("got %v, want %v", got, exp)
	}
	return ""
}

// compileCase compiles the case's query and modules to a Wasm module with
// the single entrypoint "eval", as OPA's Wasm end-to-end test does.
func compileCase(tc cases.TestCase) ([]byte, error) {
	opts := []func(*rego.Rego){
		rego.Query(tc.Query),
		rego.SetRegoVersion(ast.RegoV1),
		rego.Capabilities(ast.CapabilitiesForThisVersion(ast.CapabilitiesExperimentalKeywords(tc.ExperimentalKeywords))),
	}
	for i, m := range tc.Modules {
		opts = append(opts, rego.Module(fmt.Sprintf("module-%d.rego", i), m))
	}
	cr, err := rego.New(opts...).Compile(context.Background())
	if err != nil {
		return nil, err
	}
	return cr.Bytes, nil
}

// caseInput returns the case's input document as Rego value text (nil:
// none): the input term as OPA prints it, or the input's JSON.
func caseInput(tc cases.TestCase) ([]byte, error) {
	switch {
	case tc.InputTerm != nil:
		term, err := ast.ParseTerm(*tc.InputTerm)
		if err != nil {
			return nil, err
		}
		return []byte(term.String()), nil
	case tc.Input != nil:
		return json.Marshal(*tc.Input)
	}
	return nil, nil
}

// bctxKey is the context key of the builtin context of an evaluation.
type bctxKey struct{}

// evalCase loads the module and evaluates it once, returning the JSON
// result set and whether the memoization rewrite was applied; regexCalls
// counts the regex.match calls the host served.
func evalCase(module []byte, cfg wasm.Config, input []byte, regexCalls *atomic.Int64) ([]byte, bool, error) {
	ctx := context.Background()
	p, err := wasm.Load(ctx, module, cfg)
	if err != nil {
		return nil, false, err
	}
	defer p.Close(ctx)
	// One builtin context per evaluation, as OPA's Wasm engine makes: the
	// time (time.now_ns) and the builtin cache are the evaluation's.
	ctx = context.WithValue(ctx, bctxKey{}, &opatopdown.BuiltinContext{
		Context:  ctx,
		Metrics:  metrics.New(),
		Seed:     rand.Reader,
		Time:     ast.NumberTerm(json.Number(strconv.FormatInt(time.Now().UnixNano(), 10))),
		Cancel:   opatopdown.NewCancel(),
		Cache:    builtins.Cache{},
		Location: nil,
	})
	res, err := wasm.EvalResultSet(ctx, p, "eval", input)
	regexCalls.Add(wasm.RegexCalls(p))
	return res, wasm.Memoized(p), err
}

func init() {
	// OPA's Wasm end-to-end test declares test.sleep for its cases.
	rego.RegisterBuiltin1(&rego.Function{
		Name: "test.sleep",
		Decl: types.NewFunction(types.Args(types.S), types.NewNull()),
	}, func(_ rego.BuiltinContext, op *ast.Term) (*ast.Term, error) {
		d, _ := time.ParseDuration(string(op.Value.(ast.String)))
		time.Sleep(d)
		return ast.NullTerm(), nil
	})
}

// topdownBuiltins serves every OPA builtin by its topdown implementation,
// over Rego values as OPA's Wasm engine passes them (so sets stay sets),
// in the builtin context of the evaluation (see evalCase).
func topdownBuiltins() map[string]wasm.ValueBuiltinFunc {
	m := map[string]wasm.ValueBuiltinFunc{}
	for _, b := range ast.Builtins {
		fn := opatopdown.GetBuiltin(b.Name)
		if fn == nil {
			continue
		}
		m[b.Name] = func(ctx context.Context, args [][]byte) ([]byte, error) {
			operands := make([]*ast.Term, len(args))
			for i, a := range args {
				term, err := ast.ParseTerm(string(a))
				if err != nil {
					return nil, err
				}
				operands[i] = term
			}
			bctx, ok := ctx.Value(bctxKey{}).(*opatopdown.BuiltinContext)
			if !ok {
				return nil, fmt.Errorf("%s: no builtin context", b.Name)
			}
			var res *ast.Term
			if err := fn(*bctx, operands, func(t *ast.Term) error { res = t; return nil }); err != nil || res == nil {
				return nil, err
			}
			return []byte(res.String()), nil
		}
	}
	return m
}
