package wasm_test

import (
	"os"
	"regexp"
	"testing"
)

// TestSetsBundleIsBuiltByTheOPAGoModRequires: the go:generate line that
// builds testdata/sets-wasm.tar.gz with stock opa names the OPA version
// go.mod requires, so regenerating never mixes two OPA releases.
func TestSetsBundleIsBuiltByTheOPAGoModRequires(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^\s*github\.com/open-policy-agent/opa (v\S+)$`).FindSubmatch(mod)
	got := regexp.MustCompile(`(?m)^//go:generate go run github\.com/open-policy-agent/opa@(\S+) build`).FindSubmatch(src)
	if want == nil || got == nil {
		t.Fatalf("go.mod's opa requirement %q, the generate line's version %q: one is missing", want, got)
	}
	if string(got[1]) != string(want[1]) {
		t.Errorf("the sets bundle is generated with opa %s; go.mod requires %s", got[1], want[1])
	}
}
