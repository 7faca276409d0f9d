package policy_test

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestRegoUnitTests runs every *_test.rego of the library with OPA's test
// runner, with the schema annotations enforced as in a build.
func TestRegoUnitTests(t *testing.T) {
	mods, err := translate.ParseModules(true)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := translate.SchemaSet()
	if err != nil {
		t.Fatal(err)
	}
	compiler := ast.NewCompiler().WithSchemas(ss).WithUseTypeCheckAnnotations(true).WithEnablePrintStatements(true)
	ch, err := tester.NewRunner().SetCompiler(compiler).SetModules(mods).RunTests(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := range ch {
		n++
		t.Run(r.Package+"."+r.Name, func(t *testing.T) {
			if r.Error != nil {
				t.Fatalf("error: %v", r.Error)
			}
			if r.Fail {
				t.Fatalf("failed; output:\n%s", r.Output)
			}
		})
	}
	if n < 20 {
		t.Fatalf("ran %d Rego tests, want at least 20", n)
	}
}
