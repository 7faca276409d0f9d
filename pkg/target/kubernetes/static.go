package kubernetes

import (
	"fmt"
	"path"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// StaticSuffix ends the name of every admission object the API
// server loads from manifest files (manifest-based admission control
// configuration, beta and on by default from Kubernetes 1.37): such
// objects are in force from the API server's start, and no API client can
// change or remove them, nor create an object of such a name.
const StaticSuffix = ".static.k8s.io"

// StaticLayout is a --target kubernetes build laid out for the
// API server to load at start: each admission plugin reads the directory
// its configuration names, and the AdmissionConfiguration file
// (--admission-control-config-file) names them.
type StaticLayout struct {
	// Validating are the ValidatingAdmissionPolicies and their bindings,
	// for the ValidatingAdmissionPolicy plugin's directory; Mutating the
	// mutating ones, for the MutatingAdmissionPolicy plugin's.
	Validating, Mutating []Object
	// ValidatingDir and MutatingDir are where the API server reads them:
	// dir/validating and dir/mutating ("" when there is nothing).
	ValidatingDir, MutatingDir string
	// AdmissionConfiguration is the file --admission-control-config-file
	// names.
	AdmissionConfiguration []byte
}

// Static lays objs out for the API server to load from dir, an
// absolute path on the control-plane hosts: every name (and every
// binding's policyName) ends with StaticSuffix, and a binding
// is loaded only with its policy in the same directory, so none is ever
// in force without it. The queue check's in-force policy is left out: the
// API server refuses a static policy with a paramKind and a static binding
// with a paramRef (manifest-based admission control configuration reads
// no API object), and it needs none there, since a directory whose
// binding lacks its policy is not loaded at all.
func Static(objs []Object, dir string) (*StaticLayout, error) {
	if !path.IsAbs(dir) {
		return nil, fmt.Errorf("kubernetes target: static manifests directory %q: want an absolute path, as the API server reads it", dir)
	}
	dir = path.Clean(dir)
	l := &StaticLayout{}
	static := func(name string) string { return name + StaticSuffix }
	for _, o := range objs {
		switch p := o.Object.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if p.Spec.ParamKind != nil {
				continue
			}
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			if p.Spec.ParamRef != nil {
				continue
			}
		}
		o.Name = static(o.Name)
		switch p := o.Object.(type) {
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			c := *p
			c.Name = static(c.Name)
			o.Object = &c
			l.Mutating = append(l.Mutating, o)
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			c := *p
			c.Name, c.Spec.PolicyName = static(c.Name), static(c.Spec.PolicyName)
			o.Object = &c
			l.Mutating = append(l.Mutating, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			c := *p
			c.Name = static(c.Name)
			o.Object = &c
			l.Validating = append(l.Validating, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			c := *p
			c.Name, c.Spec.PolicyName = static(c.Name), static(c.Spec.PolicyName)
			o.Object = &c
			l.Validating = append(l.Validating, o)
		default:
			return nil, fmt.Errorf("kubernetes target: %s/%s cannot be loaded from a manifest file", o.Kind, o.Name)
		}
	}
	var b strings.Builder
	b.WriteString("# The API server's --admission-control-config-file: the admission policies\n" +
		"# of aclc build --target kubernetes, loaded from these directories at start\n" +
		"# (Kubernetes 1.37 and later: feature gate ManifestBasedAdmissionControlConfig).\n" +
		"# Merge the plugins into an AdmissionConfiguration the API server already has.\n" +
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n")
	plugin := func(name, kind, d string) {
		fmt.Fprintf(&b, "  - name: %s\n    configuration:\n      apiVersion: apiserver.config.k8s.io/v1\n      kind: %s\n      staticManifestsDir: %s\n", name, kind, d)
	}
	if len(l.Validating) > 0 {
		l.ValidatingDir = path.Join(dir, "validating")
		plugin("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyConfiguration", l.ValidatingDir)
	}
	if len(l.Mutating) > 0 {
		l.MutatingDir = path.Join(dir, "mutating")
		plugin("MutatingAdmissionPolicy", "MutatingAdmissionPolicyConfiguration", l.MutatingDir)
	}
	l.AdmissionConfiguration = []byte(b.String())
	return l, nil
}
