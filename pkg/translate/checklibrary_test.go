package translate

import (
	"fmt"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func parsedForTest(t *testing.T, src map[string]string) map[string]*ast.Module {
	t.Helper()
	mods, err := parseModules(src)
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// TestLibraryCheckIsRememberedByContent: a library that fails its type
// check fails every build, not only the first; one that passes passes; and
// the memory holds a bounded number of libraries.
func TestLibraryCheckIsRememberedByContent(t *testing.T) {
	bad := map[string]string{"bad.rego": "package bad\n\nx := count(1)\n"}
	good := map[string]string{"good.rego": "package good\n\nx := count([1])\n"}
	for i := range 2 {
		if err := checkLibrary(bad, parsedForTest(t, bad)); err == nil {
			t.Errorf("build %d: a library that misuses count passed its check", i+1)
		}
		if err := checkLibrary(good, parsedForTest(t, good)); err != nil {
			t.Errorf("build %d: %v", i+1, err)
		}
	}
	for i := range 2 * checkedLimit {
		src := map[string]string{"p.rego": fmt.Sprintf("package p\n\nx := %d\n", i)}
		if err := checkLibrary(src, parsedForTest(t, src)); err != nil {
			t.Fatal(err)
		}
	}
	checked.Lock()
	n, m := len(checked.keys), len(checked.errs)
	checked.Unlock()
	if n > checkedLimit || m != n {
		t.Errorf("remembered %d keys and %d outcomes, want at most %d of each", n, m, checkedLimit)
	}
	if err := checkLibrary(bad, parsedForTest(t, bad)); err == nil {
		t.Error("after eviction: a library that misuses count passed its check")
	}
}
