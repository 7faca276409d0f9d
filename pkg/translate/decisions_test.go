package translate

import (
	"slices"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/schemas"
)

// Every descriptor names schemas that exist and a package the policy
// library defines, and answers natively.
func TestDecisionsDescribePolicy(t *testing.T) {
	files := schemas.Files()
	mods, err := ParseModules(false)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]bool{}
	for _, m := range mods {
		pkgs[m.Package.Path.String()] = true
	}
	seen := map[string]bool{}
	var order []string
	for _, d := range Decisions() {
		order = append(order, d.Entrypoint)
		if seen[d.Entrypoint] {
			t.Errorf("%s: described twice", d.Entrypoint)
		}
		seen[d.Entrypoint] = true
		for _, name := range []string{d.Input, d.Output} {
			if _, ok := files[name]; name != "" && !ok {
				t.Errorf("%s: no schema %s", d.Entrypoint, name)
			}
		}
		pkg := "data." + strings.ReplaceAll(d.Entrypoint[:strings.LastIndex(d.Entrypoint, "/")], "/", ".")
		if !pkgs[pkg] {
			t.Errorf("%s: the policy library has no package %s", d.Entrypoint, pkg)
		}
		if d.Native == nil {
			t.Errorf("%s: no native decision", d.Entrypoint)
		}
		if !d.Admission && len(d.WebhookPaths) > 0 {
			t.Errorf("%s: not an admission decision but webhook paths %v", d.Entrypoint, d.WebhookPaths)
		}
	}
	if !slices.Equal(Entrypoints(), order) {
		t.Errorf("Entrypoints() = %v, not in the order of Decisions()", Entrypoints())
	}
}

// A caller cannot change the list through what Decisions returns.
func TestDecisionsAreCopies(t *testing.T) {
	d := Decisions()
	d[3].WebhookPaths[0] = "/elsewhere"
	d[0].Entrypoint = "x"
	if got, _ := LookupDecision(EntrypointAdmissionGuard); got.WebhookPaths[0] != "/mutate" {
		t.Errorf("webhook paths changed through a copy: %v", got.WebhookPaths)
	}
	if Entrypoints()[0] != EntrypointYuniKornQueues {
		t.Errorf("entry point changed through a copy")
	}
}

// Each family's compiled sources are found by any of its kinds.
func TestCompiledByKind(t *testing.T) {
	s := &Sources{}
	if err := s.Add("acls.yaml", []byte("vov:\n  owner: joe\n  host: pluto\n"), KindAuto); err != nil {
		t.Fatal(err)
	}
	if s.Compiled(KindVOV) == nil {
		t.Error("no compiled VOV source")
	}
	if s.Compiled(KindYuniKornQueues) != nil || s.Compiled(KindYuniKornAdmission) != nil {
		t.Error("a YuniKorn configuration compiled from a VOV source")
	}
	if s.Compiled("nothing") != nil {
		t.Error("a family of an unknown kind")
	}
}
