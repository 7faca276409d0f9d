package translate

import (
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// TestBundleRootsCoverWhatThePolicyReads pins that a bundle claims every
// data document its policy reads, so that OPA refuses a client's write
// there (OPA refuses writes under a bundle's roots), and no more than the
// families it holds, so that bundles of different families load side by side.
func TestBundleRootsCoverWhatThePolicyReads(t *testing.T) {
	tests := []struct {
		name      string
		paths     []string
		want      []string
		forbidden []string
	}{
		{
			name:  "namespaces are claimed when no Namespace source is given",
			paths: []string{"../../examples/admission/configmap-with-queues.yaml"},
			want:  []string{"aclc/admission", "aclc/admission_queue", "aclc/guard", "aclc/yunikorn", "kubernetes", "yunikorn/admission", "yunikorn/admission_queue", "yunikorn/placement", "yunikorn/queues"},
		},
		{
			name:  "namespaces given as a source are claimed once",
			paths: []string{"../../examples/admission/queue.yaml"},
			want:  []string{"aclc/admission", "aclc/admission_queue", "aclc/guard", "aclc/yunikorn", "kubernetes", "yunikorn/admission", "yunikorn/admission_queue", "yunikorn/placement", "yunikorn/queues"},
		},
		{
			name:      "a VOV bundle claims neither YuniKorn's documents nor the whole aclc tree",
			paths:     []string{"../../examples/vov/acls.yaml"},
			want:      []string{"aclc/vov", "vov/acl"},
			forbidden: []string{"aclc", "kubernetes", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSources(tt.paths, KindAuto)
			if err != nil {
				t.Fatal(err)
			}
			b, err := RegoBundle(s)
			if err != nil {
				t.Fatal(err)
			}
			roots := *b.Manifest.Roots
			if !slices.Equal(roots, tt.want) {
				t.Errorf("roots %q, want %q", roots, tt.want)
			}
			for _, f := range tt.forbidden {
				if slices.Contains(roots, f) {
					t.Errorf("roots %q claim %q", roots, f)
				}
			}
		})
	}
}

// TestPolicyReads pins how a module's reads of data become roots.
func TestPolicyReads(t *testing.T) {
	tests := []struct {
		name   string
		module string
		want   []string
	}{
		{"a document is claimed at its top level", "package p\nx := data.kubernetes.namespaces[n]", []string{"kubernetes", "p"}},
		{"under aclc, at its second level", "package p\nx := data.aclc.yunikorn.partitions", []string{"aclc/yunikorn", "p"}},
		{"object.get reads the document at its key", "package p\nx := object.get(data.aclc, \"admission_queue\", {})", []string{"aclc/admission_queue", "p"}},
		{"object.get's default is read too", "package p\nx := object.get(data.aclc, \"a\", data.other.b)", []string{"aclc/a", "other", "p"}},
		{"aclc read whole claims all of it", "package p\nx := data.aclc", []string{"aclc", "p"}},
		{"a rule of the bundle is not a document", "package p.q\nx := data.p.q.y\ny := 1", []string{"p/q"}},
		{"data read by a variable claims everything", "package p\nx := data[k]", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ast.ParseModuleWithOpts("p.rego", tt.module, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			if got := bundleRoots(nil, map[string]*ast.Module{"p.rego": m}); !slices.Equal(got, tt.want) {
				t.Errorf("roots %q, want %q", got, tt.want)
			}
		})
	}
}
