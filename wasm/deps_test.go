package wasm_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies pins what a program that evaluates bundles with this
// package pulls in: wazero and the standard library, nothing of OPA,
// Kubernetes or LDAP (only the tests, and aclc's builtins, use those).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/aclc-dev/aclc/wasm").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	allowed := []string{"github.com/aclc-dev/aclc/wasm", "github.com/tetratelabs/wazero", "golang.org/x/sys/"}
	wazero := false
	for _, d := range deps {
		wazero = wazero || d == "github.com/tetratelabs/wazero"
		ok := false
		for _, a := range allowed {
			ok = ok || d == a || strings.HasPrefix(d, strings.TrimSuffix(a, "/")+"/")
		}
		for _, bad := range []string{"open-policy-agent", "k8s.io", "ldap"} {
			if strings.Contains(d, bad) {
				t.Errorf("github.com/aclc-dev/aclc/wasm depends on %s", d)
				ok = true // reported once
			}
		}
		if !ok {
			t.Errorf("github.com/aclc-dev/aclc/wasm depends on %s, beyond wazero and the standard library", d)
		}
	}
	if !wazero {
		t.Errorf("go list printed no wazero among %q", deps)
	}
}
