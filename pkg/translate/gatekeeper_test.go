package translate

import (
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Gatekeeper compiles a template's code and libraries on their own:
// libraries must be package lib.*, and data may be read only under
// data.lib and data.inventory. The library is the admission policy
// rewritten, so this fails when the policy grows a reference the rewrite
// does not cover.
func TestGatekeeperCodeReadsOnlyLibAndInventory(t *testing.T) {
	libs, err := GatekeeperLibrary()
	if err != nil {
		t.Fatal(err)
	}
	entry, err := GatekeeperTemplateRego()
	if err != nil {
		t.Fatal(err)
	}
	modules := map[string]string{"template.rego": entry}
	for i, l := range libs {
		modules["lib"+string(rune('0'+i))+".rego"] = l
	}
	for name, src := range modules {
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name != "template.rego" && !strings.HasPrefix(m.Package.Path.String(), "data.lib.") {
			t.Errorf("%s: package %s is not under lib", name, m.Package.Path)
		}
		for _, rule := range m.Rules {
			ast.WalkRefs(rule, func(r ast.Ref) bool {
				if r.HasPrefix(ast.DefaultRootRef) && !r.HasPrefix(ast.MustParseRef("data.lib")) && !r.HasPrefix(ast.MustParseRef("data.inventory")) {
					t.Errorf("%s: reads %s; Gatekeeper allows only data.lib and data.inventory", name, r)
				}
				return false
			})
			ast.WalkExprs(rule, func(e *ast.Expr) bool {
				if e.IsCall() && strings.HasPrefix(e.Operator().String(), "aclc.") {
					t.Errorf("%s calls %s; Gatekeeper has no aclc builtins", name, e.Operator())
				}
				return false
			})
		}
	}
	comp := ast.NewCompiler()
	parsed := map[string]*ast.Module{}
	for name, src := range modules {
		parsed[name] = ast.MustParseModuleWithOpts(src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	}
	if comp.Compile(parsed); comp.Failed() {
		t.Fatalf("template and library do not compile together: %v", comp.Errors)
	}
}
