package wasm_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoOPADependency pins that the package does not depend on OPA (only
// its tests do).
func TestNoOPADependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/aclc-dev/aclc/wasm").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no dependencies")
	}
	for _, d := range deps {
		if strings.Contains(d, "open-policy-agent") {
			t.Errorf("github.com/aclc-dev/aclc/wasm depends on %s", d)
		}
	}
}
