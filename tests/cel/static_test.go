package cel

import (
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/policy/manifest/loader"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The static layout of a build is what the API server's own manifest
// loader (k8s.io/apiserver, the code kube-apiserver runs at start) loads:
// names with the reserved suffix, every binding with its policy in the same
// directory, no parameters; a directory holding a binding whose policy is
// missing is refused whole, so none is ever in force without it.
func TestStaticManifestsLoadAsTheAPIServerLoadsThem(t *testing.T) {
	s, err := translate.LoadSources([]string{"../../examples/kubernetes/yunikorn-configs.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubernetes.Objects(s, kubernetes.Options{Name: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	l, err := kubernetes.Static(objs, root)
	if err != nil {
		t.Fatal(err)
	}
	write := func(dir string, objs []kubernetes.Object) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			doc, err := o.YAML()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, o.FileName()), doc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(l.ValidatingDir, l.Validating)
	write(l.MutatingDir, l.Mutating)
	decoder := scheme.Codecs.UniversalDeserializer()
	vps, vbs, _, err := loader.LoadPolicyManifests(l.ValidatingDir, decoder,
		func(obj runtime.Object) ([]*admissionregistrationv1.ValidatingAdmissionPolicy, error) {
			if p, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
				return []*admissionregistrationv1.ValidatingAdmissionPolicy{p}, nil
			}
			return nil, loader.ErrUnrecognizedType
		},
		func(obj runtime.Object) ([]*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
			if b, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok {
				return []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{b}, nil
			}
			return nil, loader.ErrUnrecognizedType
		},
		func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
	if err != nil {
		t.Fatalf("validating: %v", err)
	}
	if len(vps) != 3 || len(vbs) != 3 || vps[0].Name != "team-a-queue-warnings.static.k8s.io" {
		t.Errorf("validating: %d policies, %d bindings (%s)", len(vps), len(vbs), vps[0].Name)
	}
	mutating := func(dir string) error {
		_, _, _, err := loader.LoadPolicyManifests(dir, decoder,
			func(obj runtime.Object) ([]*admissionregistrationv1.MutatingAdmissionPolicy, error) {
				if p, ok := obj.(*admissionregistrationv1.MutatingAdmissionPolicy); ok {
					return []*admissionregistrationv1.MutatingAdmissionPolicy{p}, nil
				}
				return nil, loader.ErrUnrecognizedType
			},
			func(obj runtime.Object) ([]*admissionregistrationv1.MutatingAdmissionPolicyBinding, error) {
				if b, ok := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding); ok {
					return []*admissionregistrationv1.MutatingAdmissionPolicyBinding{b}, nil
				}
				return nil, loader.ErrUnrecognizedType
			},
			func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
		return err
	}
	if err := mutating(l.MutatingDir); err != nil {
		t.Fatalf("mutating: %v", err)
	}
	// A binding without its policy: the loader refuses the directory.
	if err := os.Remove(filepath.Join(l.MutatingDir, l.Mutating[0].FileName())); err != nil {
		t.Fatal(err)
	}
	if err := mutating(l.MutatingDir); err == nil {
		t.Errorf("a binding without its policy loads")
	}
}
