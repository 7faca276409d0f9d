package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/test/cases"
	opatopdown "github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/wasm"
)

// minOPACases is the number of OPA test cases TestOPACasesMemoRewrite must
// evaluate; fewer means the corpus or the host changed under the test.
const minOPACases = 1000

// TestOPACasesMemoRewrite runs OPA's own conformance cases
// (v1/test/cases/testdata/v1 of the OPA module), compiled to Wasm as OPA's
// Wasm end-to-end test compiles them (rego.Compile of the case's query),
// on this host with the module rewrites — memoization (internal/memo),
// regex.match served by the host (internal/reroute) and the merge sort
// (opasort) — and without them,
// and requires byte-identical result sets, or identical errors.
//
// Skipped: cases OPA's Wasm exceptions list skips
// (internal/wasm/sdk/test/e2e/exceptions.yaml), cases that set environment
// variables (the cases run in parallel), cases that do not compile to Wasm,
// and cases whose module needs a non-deterministic builtin (time.now_ns,
// rand.intn, http.send...), whose results could differ between the two
// runs. The other builtins OPA does not compile into the module are served
// by OPA's topdown implementations (see topdownBuiltins).
//
// The modules run on wazero's interpreter, whose compilation is several
// times faster than the compiler's; ACLC_OPA_CASES_COMPILER=1 runs them on
// the compiler (a few minutes).
func TestOPACasesMemoRewrite(t *testing.T) {
	if testing.Short() {
		t.Skip("loads thousands of policies")
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

	cfg := wasm.NewConfig().WithPoolSize(1).WithBuiltins(topdownBuiltins())
	if os.Getenv("ACLC_OPA_CASES_COMPILER") == "" {
		cfg = wasm.WithInterpreter(cfg)
	}
	var ran, failed, rewritten, excepted, withEnv, noCompile, needsBuiltins, badInput, regexCalls, noRoute atomic.Int64
	t.Run("cases", func(t *testing.T) {
		for _, tc := range set.Sorted().Cases {
			t.Run(tc.Note, func(t *testing.T) {
				t.Parallel()
				if isException(exceptions, tc.Note) {
					excepted.Add(1)
					t.Skip("in OPA's Wasm exceptions")
				}
				if len(tc.Env) > 0 {
					withEnv.Add(1)
					t.Skip("sets environment variables")
				}
				module, err := compileCase(tc)
				if err != nil {
					noCompile.Add(1)
					t.Skipf("does not compile to Wasm: %v", err)
				}
				input, err := caseInput(tc)
				if err != nil {
					badInput.Add(1)
					t.Skipf("input: %v", err)
				}
				c := cfg
				if tc.Data != nil {
					data, err := json.Marshal(*tc.Data)
					if err != nil {
						t.Fatal(err)
					}
					c = c.WithData(data)
				}
				got, memoized, gerr := evalCase(module, c, input, &regexCalls)
				if gerr != nil && strings.Contains(gerr.Error(), "not found") && strings.Contains(gerr.Error(), "builtin") {
					needsBuiltins.Add(1)
					t.Skip(gerr)
				}
				want, _, werr := evalCase(module, wasm.WithoutSortRewrite(wasm.WithoutRegexRoute(wasm.WithoutMemoRewrite(c))), input, &noRoute)
				ran.Add(1)
				if memoized {
					rewritten.Add(1)
				}
				switch {
				case gerr != nil || werr != nil:
					failed.Add(1)
					if fmt.Sprint(gerr) != fmt.Sprint(werr) {
						t.Fatalf("with the rewrite: %s, %v\nwithout: %s, %v", got, gerr, want, werr)
					}
				case !bytes.Equal(got, want):
					t.Fatalf("with the rewrite: %s\nwithout: %s", got, want)
				}
			})
		}
	})
	t.Logf("OPA cases: %d evaluated with and without the rewrites (%d of them rewritten, %d failing alike in both; %d regex.match calls served by the host); skipped: %d in OPA's Wasm exceptions, %d setting environment variables, %d not compiling to Wasm, %d needing non-deterministic builtins, %d with input that is not JSON",
		ran.Load(), rewritten.Load(), failed.Load(), regexCalls.Load(), excepted.Load(), withEnv.Load(), noCompile.Load(), needsBuiltins.Load(), badInput.Load())
	if noRoute.Load() != 0 {
		t.Errorf("the host served %d regex.match calls without the rewrite", noRoute.Load())
	}
	if regexCalls.Load() < 40 {
		t.Errorf("the host served %d regex.match calls, want OPA's regex cases to go through it", regexCalls.Load())
	}
	if n := ran.Load(); n < minOPACases {
		t.Fatalf("evaluated %d OPA cases, want at least %d", n, minOPACases)
	}
	if f := failed.Load(); f > ran.Load()/10 {
		t.Fatalf("%d of %d OPA cases failed to evaluate", f, ran.Load())
	}
	if r := rewritten.Load(); r < ran.Load()*9/10 {
		t.Fatalf("only %d of %d modules were rewritten", r, ran.Load())
	}
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

// caseInput returns the case's input document as JSON (nil: none).
func caseInput(tc cases.TestCase) ([]byte, error) {
	switch {
	case tc.InputTerm != nil:
		term, err := ast.ParseTerm(*tc.InputTerm)
		if err != nil {
			return nil, err
		}
		v, err := ast.JSON(term.Value)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v)
	case tc.Input != nil:
		return json.Marshal(*tc.Input)
	}
	return nil, nil
}

// evalCase loads the module and evaluates it once, returning the result
// set and whether the memoization rewrite was applied; regexCalls counts
// the regex.match calls the host served.
func evalCase(module []byte, cfg wasm.Config, input []byte, regexCalls *atomic.Int64) ([]byte, bool, error) {
	ctx := context.Background()
	p, err := wasm.Load(ctx, module, cfg)
	if err != nil {
		return nil, false, err
	}
	defer p.Close(ctx)
	res, err := wasm.EvalResultSet(ctx, p, "eval", input)
	regexCalls.Add(wasm.RegexCalls(p))
	return res, wasm.Memoized(p), err
}

// topdownBuiltins serves every deterministic OPA builtin by its topdown
// implementation, with JSON arguments and result as the host passes them
// (so sets arrive as arrays: the results need not be topdown's, only the
// same in both runs).
func topdownBuiltins() map[string]wasm.BuiltinFunc {
	m := map[string]wasm.BuiltinFunc{}
	for _, b := range ast.Builtins {
		fn := opatopdown.GetBuiltin(b.Name)
		if fn == nil || b.Nondeterministic {
			continue
		}
		m[b.Name] = func(ctx context.Context, args []json.RawMessage) (json.RawMessage, error) {
			operands := make([]*ast.Term, len(args))
			for i, a := range args {
				var x any
				if err := util.UnmarshalJSON(a, &x); err != nil {
					return nil, err
				}
				v, err := ast.InterfaceToValue(x)
				if err != nil {
					return nil, err
				}
				operands[i] = ast.NewTerm(v)
			}
			bctx := opatopdown.BuiltinContext{
				Context: ctx,
				Time:    ast.NumberTerm(json.Number("1700000000000000000")),
				Cache:   builtins.Cache{},
			}
			var res *ast.Term
			if err := fn(bctx, operands, func(t *ast.Term) error { res = t; return nil }); err != nil || res == nil {
				return nil, err
			}
			v, err := ast.JSON(res.Value)
			if err != nil {
				return nil, err
			}
			return json.Marshal(v)
		}
	}
	return m
}
