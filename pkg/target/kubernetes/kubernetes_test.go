package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"sigs.k8s.io/yaml"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

func kubernetesSources(t *testing.T, configMap string) *translate.Sources {
	t.Helper()
	s := &translate.Sources{}
	if err := s.Add("yunikorn-configs.yaml", []byte(configMap), translate.KindAuto); err != nil {
		t.Fatal(err)
	}
	return s
}

// Each object is written as a typed admissionregistration/v1 object that
// strict YAML decoding reads back unchanged; bypassAuth leaves out the
// mutating policy, and the refusals of a pre-set value with it.
func TestKubernetesObjectsDecodeStrictly(t *testing.T) {
	for _, tc := range []struct {
		rule, source string
		kinds        string
	}{
		{"defaults write both policies, then their bindings", "admissionController.accessControl.externalGroups: \"^admins$\"\n",
			"MutatingAdmissionPolicy ValidatingAdmissionPolicy MutatingAdmissionPolicyBinding ValidatingAdmissionPolicyBinding"},
		{"bypassAuth writes no mutating policy", "admissionController.accessControl.bypassAuth: \"true\"\n",
			"ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			objs, err := AllObjects(kubernetesSources(t, tc.source))
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.Kind)
				doc, err := o.YAML()
				if err != nil {
					t.Fatal(err)
				}
				var into any
				switch o.Kind {
				case "MutatingAdmissionPolicy":
					into = &admissionregistrationv1.MutatingAdmissionPolicy{}
				case "MutatingAdmissionPolicyBinding":
					into = &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
				case "ValidatingAdmissionPolicy":
					into = &admissionregistrationv1.ValidatingAdmissionPolicy{}
				case "ValidatingAdmissionPolicyBinding":
					into = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
				}
				if err := yaml.UnmarshalStrict(doc, into); err != nil {
					t.Errorf("%s: strict decoding: %v", o.Kind, err)
				}
				again, _ := yaml.Marshal(into)
				if want, _ := yaml.Marshal(o.Object); string(again) != string(want) {
					t.Errorf("%s does not read back unchanged", o.Kind)
				}
			}
			if got := strings.Join(kinds, " "); got != tc.kinds {
				t.Errorf("kinds %s, want %s", got, tc.kinds)
			}
		})
	}
}

// A pattern Go's regexp refuses would make the API server refuse the
// policy (CEL compiles literal patterns when the policy is created).
// YuniKorn's parsing never keeps one, so only settings made by hand reach
// the check.
func TestKubernetesRefusesAPatternThatDoesNotCompile(t *testing.T) {
	st := &admission.Settings{ExternalUsers: []string{"^ok$", "(unclosed"}}
	err := checkPatterns(st)
	if err == nil || !strings.Contains(err.Error(), admission.KeyExternalUsers) || !strings.Contains(err.Error(), `"(unclosed"`) {
		t.Errorf("checkPatterns: %v", err)
	}
}

// A CEL expression longer than CEL's parser takes is refused with the
// expression named, and nothing is returned; a pattern list just short of
// it is written.
func TestKubernetesRefusesAnExpressionTooLongToParse(t *testing.T) {
	for _, tc := range []struct {
		rule     string
		patterns int
		refused  bool
	}{
		{"a thousand patterns are written", 1000, false},
		{"three thousand patterns make the allowed variable too long", 3000, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			patterns := make([]string, tc.patterns)
			for i := range patterns {
				patterns[i] = "^system:serviceaccount:team-" + strconv.Itoa(i) + ":runner$"
			}
			objs, err := AllObjects(kubernetesSources(t, "admissionController.accessControl.externalUsers: \""+strings.Join(patterns, ",")+"\"\n"))
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || objs != nil || !strings.Contains(err.Error(), "variable allowed is") || !strings.Contains(err.Error(), "code points") {
				t.Errorf("objects %d, error %v", len(objs), err)
			}
		})
	}
}

// A build without YuniKorn configuration is refused as a source error.
func TestKubernetesNeedsAYuniKornConfiguration(t *testing.T) {
	s, err := translate.LoadSources([]string{"../../../examples/vov/acls.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatalf("VOV source: %v", err)
	}
	if _, err := AllObjects(s); err == nil || !strings.Contains(err.Error(), "no YuniKorn configuration") {
		t.Errorf("error %v", err)
	}
}

// Each part of the guard that is off leaves out its validation and its
// match rules: with every part off the user.info policies match and refuse
// what YuniKorn's admission controller does, and no more.
func TestKubernetesGuardPartsOffLeaveTheirValidationsOut(t *testing.T) {
	policy := func(off []admission.GuardPart) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicy) {
		objs, err := AllObjects(kubernetesSources(t, "admissionController.accessControl.externalGroups: \"^admins$\"\n").WithGuardOff(off))
		if err != nil {
			t.Fatal(err)
		}
		var v *admissionregistrationv1.ValidatingAdmissionPolicy
		var m *admissionregistrationv1.MutatingAdmissionPolicy
		for _, o := range objs {
			switch p := o.Object.(type) {
			case *admissionregistrationv1.ValidatingAdmissionPolicy:
				v = p
			case *admissionregistrationv1.MutatingAdmissionPolicy:
				m = p
			}
		}
		return v, m
	}
	text := func(o any) string {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		part admission.GuardPart
		mark string // a text only that part writes
	}{
		{admission.GuardUsernameLabel, "labelRefused"},
		{admission.GuardPodUpdate, "guard-off=pod-update"},
		{admission.GuardReplicationControllers, "replicationcontrollers"},
		{admission.GuardWorkloadUpdate, "guard-off=workload-update"},
		{admission.GuardFilteredWorkloads, "guard-off=filtered-workloads"},
	} {
		t.Run(string(tc.part), func(t *testing.T) {
			on, _ := policy(nil)
			off, mOff := policy([]admission.GuardPart{tc.part})
			if !strings.Contains(text(on), tc.mark) {
				t.Errorf("with every part on, the validating policy has no %q", tc.mark)
			}
			if strings.Contains(text(off), tc.mark) || strings.Contains(text(mOff), tc.mark) {
				t.Errorf("with %s off, the policies still have %q", tc.part, tc.mark)
			}
		})
	}
	all, _ := policy(admission.GuardParts())
	if s := text(all.Spec.MatchConstraints); strings.Contains(s, "pods/status") || strings.Contains(s, "UPDATE\n    resources:\n    - deployments") {
		t.Errorf("with every part off, the validating policy matches more than YuniKorn's webhook:\n%s", s)
	}
}

// What client-side kubectl apply records for an object is its JSON as
// kubectl encodes it (keys sorted, an empty annotations map, a final line
// break); an object whose record is over what the annotation may hold is
// named, with that size, and one at the bound is not.
func TestKubernetesServerSideOnlyNamesObjectsOverTheAnnotation(t *testing.T) {
	policy := func(name string, exprBytes int) Object {
		p := validatingPolicy(name, nil, nil, nil)
		// HTML characters are escaped by kubectl's encoder: 6 bytes each.
		p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "v", Expression: `"<&` + strings.Repeat("a", exprBytes) + `"`}}
		return Object{Kind: "ValidatingAdmissionPolicy", Name: name, Object: p}
	}
	small := policy("small", 100)
	n, err := ClientApplyBytes(small)
	if err != nil {
		t.Fatal(err)
	}
	// The typed object's JSON has the same fields, in another order,
	// without the annotations kubectl sets to {}.
	b, err := json.Marshal(small.Object)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(b) + len(`"annotations":{},`) + len("\n"); n != want || !bytes.Contains(b, []byte(`\u003c\u0026`)) {
		t.Fatalf("recorded %d bytes, want %d (the typed JSON %d, with annotations {} and a line break)", n, want, len(b))
	}
	// The annotations' bound: key and value at most 256 KiB.
	if MaxClientApplyBytes+len("kubectl.kubernetes.io/last-applied-configuration") != 262144 {
		t.Fatalf("MaxClientApplyBytes %d", MaxClientApplyBytes)
	}
	atBound := policy("bound", 100+MaxClientApplyBytes-n)
	over := policy("overs", 101+MaxClientApplyBytes-n)
	// The API server's own check of an object's annotations takes the one
	// at the bound and refuses the one over it.
	for _, tc := range []struct {
		o    Object
		fits bool
	}{{atBound, true}, {over, false}} {
		v, err := kubectlLastAppliedValue(tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if err := apivalidation.ValidateAnnotationsSize(map[string]string{kubectlLastApplied: string(v)}); (err == nil) != tc.fits {
			t.Errorf("%s: %d bytes recorded: the API server's check says %v", tc.o.Name, len(v), err)
		}
	}
	got, err := ServerSideOnly([]Object{small, atBound, over})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("ValidatingAdmissionPolicy/overs (%d bytes)", MaxClientApplyBytes+1); len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want [%s]", got, want)
	}
}
