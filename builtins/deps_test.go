package builtins_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies pins builtins as a leaf: the decisions of pkg/acl take
// its group resolver, so it must import none of them, nor Kubernetes (the
// admission policy's builtins live with pkg/acl/admission), nor OPA (the
// adapters in opabuiltins and pkg/engine register it with each runtime).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/aclc-dev/aclc/builtins").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	self := false
	for _, d := range deps {
		self = self || d == "github.com/aclc-dev/aclc/builtins"
		for _, bad := range []string{"github.com/aclc-dev/aclc/pkg/", "k8s.io/", "open-policy-agent"} {
			if strings.HasPrefix(d, bad) || strings.Contains(d, "/"+bad) {
				t.Errorf("github.com/aclc-dev/aclc/builtins depends on %s", d)
			}
		}
	}
	if !self {
		t.Errorf("go list printed no builtins package among %q", deps)
	}
}
