package gatekeeper

import (
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	gkpolicy "github.com/aclc-dev/aclc/policy/gatekeeper"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

// Gatekeeper compiles a template's code and libraries on their own:
// libraries must be package lib.*, and data may be read only under
// data.lib and data.inventory. The library is the admission policy
// rewritten, so this fails when the policy grows a reference the rewrite
// does not cover.
func TestGatekeeperCodeReadsOnlyLibAndInventory(t *testing.T) {
	libs, err := Library()
	if err != nil {
		t.Fatal(err)
	}
	entry, err := TemplateRego()
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

// Each Gatekeeper form swaps in for the bundle form of the same name, so it
// must be in the same package and define the same rules: a rule only one
// form defines would be undefined, or read data, in the other.
func TestGatekeeperFormsMatchTheirBundleForms(t *testing.T) {
	bundleForms := policy.Modules()
	for name, src := range gkpolicy.Modules() {
		bsrc, ok := bundleForms[name]
		if !ok {
			t.Errorf("%s has no bundle form in policy/rego", name)
			continue
		}
		gk := ast.MustParseModuleWithOpts(src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		b := ast.MustParseModuleWithOpts(bsrc, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if !gk.Package.Path.Equal(b.Package.Path) {
			t.Errorf("%s: package %s, its bundle form's is %s", name, gk.Package.Path, b.Package.Path)
		}
		if got, want := ruleNames(gk), ruleNames(b); got != want {
			t.Errorf("%s: rules %s, its bundle form's are %s", name, got, want)
		}
		for _, rule := range gk.Rules {
			ast.WalkRefs(rule, func(r ast.Ref) bool {
				if r.HasPrefix(ast.DefaultRootRef) && !r.HasPrefix(ast.MustParseRef("data.inventory")) {
					t.Errorf("%s: reads %s; a Gatekeeper library reads its configuration from its input", name, r)
				}
				return false
			})
		}
	}
}

func ruleNames(m *ast.Module) string {
	seen := map[string]bool{}
	var names []string
	for _, r := range m.Rules {
		if n := r.Head.Ref().String(); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// The libraries are made from the policy without editing its text: a
// module with no configuration to read is the bundle's, formatted, with its
// package under lib.
func TestGatekeeperLibraryIsThePolicyUnderLib(t *testing.T) {
	libs, err := gatekeeperQueueLibrary()
	if err != nil {
		t.Fatal(err)
	}
	names := append(append([]string(nil), gatekeeperAdmissionModules...), gatekeeperQueueModules...)
	if len(libs) != len(names) {
		t.Fatalf("%d libraries for %d modules", len(libs), len(names))
	}
	for i, name := range names {
		lib := ast.MustParseModuleWithOpts(libs[i], ast.ParserOptions{RegoVersion: ast.RegoV1})
		src, ok := gkpolicy.Modules()[name]
		if !ok {
			src = policy.Modules()[name]
		}
		orig := ast.MustParseModuleWithOpts(src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if want := "data.lib." + strings.TrimPrefix(orig.Package.Path.String(), "data."); lib.Package.Path.String() != want {
			t.Errorf("%s: package %s, want %s", name, lib.Package.Path, want)
		}
		if len(lib.Rules) != len(orig.Rules) {
			t.Errorf("%s: %d rules, the policy's module has %d", name, len(lib.Rules), len(orig.Rules))
		}
	}
}

// Both templates read their settings with the same rules; they are written
// out in each entry module, so this keeps them one rule set.
func TestGatekeeperTemplatesShareTheSettingsRules(t *testing.T) {
	rules := map[string]map[string][]*ast.Rule{}
	for _, name := range []string{TemplateName, QueueTemplateName} {
		src, err := gkpolicy.Template(name)
		if err != nil {
			t.Fatal(err)
		}
		m := ast.MustParseModuleWithOpts(src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		rules[name] = map[string][]*ast.Rule{}
		for _, r := range m.Rules {
			rules[name][r.Head.Name.String()] = append(rules[name][r.Head.Name.String()], r)
		}
	}
	for _, rule := range []string{"defaults", "params", "param_fields", "settings"} {
		a, b := rules[TemplateName][rule], rules[QueueTemplateName][rule]
		if len(a) != 1 || len(b) != 1 {
			t.Errorf("%s: %d and %d definitions, want one in each template", rule, len(a), len(b))
			continue
		}
		if !a[0].Head.Equal(b[0].Head) || !a[0].Body.Equal(b[0].Body) || (a[0].Else == nil) != (b[0].Else == nil) ||
			(a[0].Else != nil && (!a[0].Else.Head.Equal(b[0].Else.Head) || !a[0].Else.Body.Equal(b[0].Else.Body))) {
			t.Errorf("%s differs between the templates:\n%s\n%s", rule, a[0], b[0])
		}
	}
}

// The build sets the templates' constants on the parsed module: the
// printed entry module holds the values, as Rego terms.
func TestGatekeeperEntryConstants(t *testing.T) {
	entry, err := gatekeeperEntry(QueueTemplateName, map[string]any{"compiled": map[string]any{"partitions": map[string]any{}, "note": "<a & b>"}})
	if err != nil {
		t.Fatal(err)
	}
	m := ast.MustParseModuleWithOpts(entry, ast.ParserOptions{RegoVersion: ast.RegoV1})
	want := map[string]string{
		"compiled":     `{"note": "<a & b>", "partitions": {}}`,
		"param_fields": `"bypassAuth": "bypass_auth"`,
		"defaults":     `"bypass_auth": false`,
	}
	for _, r := range m.Rules {
		if w, ok := want[r.Head.Name.String()]; ok {
			if got := r.Head.Value.String(); !strings.Contains(got, w) {
				t.Errorf("%s := %s, want it to hold %s", r.Head.Name, got, w)
			}
			delete(want, r.Head.Name.String())
		}
	}
	if len(want) > 0 {
		t.Errorf("rules not found: %v", want)
	}
	if _, err := gatekeeperEntry(TemplateName, map[string]any{"compiled": 1}); err == nil {
		t.Error("a value for a rule the template lacks must fail the build")
	}
}

// The user.info template decides as the release it was built for: the
// build writes the release's switches into the entry module, which passes
// them to the library.
func TestGatekeeperUserInfoTemplateCarriesTheRelease(t *testing.T) {
	for _, tt := range []struct {
		name, version string
		on            bool
	}{
		{"1.5.0 counts no canonical app-id label in the filter", "1.5.0", true},
		{"1.6.0 counts the canonical app-id label", "1.6.0", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := release.Lookup(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			entry, err := gatekeeperUserInfoEntry(rel, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := ast.MustParseModuleWithOpts(entry, ast.ParserOptions{RegoVersion: ast.RegoV1})
			var value string
			for _, r := range m.Rules {
				if r.Head.Name.String() == "release" {
					value = r.Head.Value.String()
				}
			}
			if !strings.Contains(value, `"version": "`+tt.version+`"`) {
				t.Errorf("release := %s, want version %s", value, tt.version)
			}
			if got := strings.Contains(value, `"`+string(release.AppIDLabelNotFiltered)+`": true`); got != tt.on {
				t.Errorf("release := %s: switch %s on = %v, want %v", value, release.AppIDLabelNotFiltered, got, tt.on)
			}
		})
	}
}
