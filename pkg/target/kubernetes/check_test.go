package kubernetes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// An expression the API server would refuse when the policy is created
// refuses the build: the error names the policy, the variable or
// validation, and cel-go's reason.
func TestCheckRefusesWhatTheAPIServerRefuses(t *testing.T) {
	for _, tc := range []struct {
		rule        string
		vars        []admissionregistrationv1.Variable
		validations []admissionregistrationv1.Validation
		want        []string
	}{
		{"a variable read before it is declared",
			[]admissionregistrationv1.Variable{{Name: "a", Expression: "variables.b"}, {Name: "b", Expression: "1"}}, nil,
			[]string{"variable a", "undefined field 'b'"}},
		{"a field the request does not have",
			[]admissionregistrationv1.Variable{{Name: "user", Expression: "request.userInfo.name"}}, nil,
			[]string{"variable user", "undefined field 'name'"}},
		{"a variable the API server does not declare",
			[]admissionregistrationv1.Variable{{Name: "v", Expression: "pod.metadata"}}, nil,
			[]string{"variable v", "undeclared reference to 'pod'"}},
		{"a validation that gives no bool",
			nil, []admissionregistrationv1.Validation{{Expression: `request.operation`}},
			[]string{"validation 0", "must evaluate to bool but gives string"}},
		{"a message expression that gives no string",
			nil, []admissionregistrationv1.Validation{{Expression: "true", MessageExpression: "1"}},
			[]string{"validation 0 messageExpression", "must evaluate to string but gives int"}},
		{"a map literal of strings and dyn",
			[]admissionregistrationv1.Variable{{Name: "m", Expression: `{}`}, {Name: "o", Expression: `{"a": "x", "b": variables.m[?"k"].orValue("y")}`}}, nil,
			[]string{"variable o", "expected type 'string' but found 'dyn'"}},
		{"a pattern that does not compile",
			[]admissionregistrationv1.Variable{{Name: "ok", Expression: `request.namespace.matches("(")`}}, nil,
			[]string{"variable ok", "invalid matches argument"}},
		{"params without a paramKind",
			nil, []admissionregistrationv1.Validation{{Expression: "params != null"}},
			[]string{"validation 0", "undeclared reference to 'params'"}},
		{"a function of no library",
			[]admissionregistrationv1.Variable{{Name: "f", Expression: `request.namespace.capitalize()`}}, nil,
			[]string{"variable f", "undeclared reference to 'capitalize'"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			p := validatingPolicy("checked", nil, nil, nil)
			p.Spec.Variables, p.Spec.Validations = tc.vars, tc.validations
			err := checkObject(Object{Kind: "ValidatingAdmissionPolicy", Name: "checked", Object: p})
			if err == nil {
				t.Fatal("checked")
			}
			for _, w := range append([]string{"ValidatingAdmissionPolicy/checked"}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// What the policies read of the API server's environment checks: the
// request's and the namespace's fields, the optional syntax, the string
// and list extensions, the regex search and the JSON Patch library.
func TestCheckTakesTheAdmissionEnvironment(t *testing.T) {
	p := validatingPolicy("checked", nil, nil, nil)
	p.Spec.Variables = []admissionregistrationv1.Variable{
		{Name: "user", Expression: `request.userInfo.?username.orValue("")`},
		{Name: "ns", Expression: `namespaceObject.metadata.?annotations.orValue({})[?"a"].orValue("")`},
		{Name: "found", Expression: `variables.user.find("^[a-z]+").lowerAscii() + variables.ns.findAll("x", 2).join(",")`},
		{Name: "slice", Expression: `[1, 2, 3].slice(1, 2).map(x, x + 1)`},
		{Name: "old", Expression: `oldObject.?spec.?schedulingGates.orValue([])`},
	}
	p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: `size(variables.found) >= 0`, MessageExpression: `variables.user + string(size(variables.slice))`}}
	if err := checkObject(Object{Kind: "ValidatingAdmissionPolicy", Name: "checked", Object: p}); err != nil {
		t.Fatal(err)
	}
}

// A file resolver that resolves every user compiles in no table of
// errors: an empty one would give the error the type dyn, and the
// placement's outcomes, maps of strings, could not hold it; the API
// server refused such a policy.
func TestKubernetesQueueWithAFileResolverThatNeverFails(t *testing.T) {
	groups := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(groups, []byte("alice: [dev, ops]\nbob: [test]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := kubernetesSources(t, queueConfigMap("        placementrules:\n          - name: provided\n"))
	s, err := s.WithGroupResolution("file="+groups, true)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Objects(s, Options{Decisions: []string{translate.GatekeeperQueue}})
	if err != nil {
		t.Fatal(err)
	}
	var table bool
	for _, o := range objs {
		if p, ok := o.Object.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok && o.Name == QueuePolicy {
			for _, v := range p.Spec.Variables {
				table = table || v.Name == "groupTable"
				if v.Name == "groupErrors" {
					t.Errorf("groupErrors written: %s", v.Expression)
				}
			}
		}
	}
	if !table {
		t.Error("no groupTable: the resolver's answers are not compiled in")
	}
}
