package kubernetes

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes/cel"
)

// queueConfigMap is a ConfigMap with a queue configuration: the partition
// block given (placement rules, resolver) and two queues.
func queueConfigMap(partition string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-configs, namespace: yunikorn}
data:
  queues.yaml: |
    partitions:
      - name: default
` + partition + `        queues:
          - name: root
            queues:
              - {name: sandbox, submitacl: "*"}
              - {name: private, submitacl: " admins"}
`
}

// The queue policies are written beside the user.info ones when the
// sources hold a queue configuration whose groups a policy can know: a
// Deny-bound policy and a Warn-bound one, by their fixed names.
func TestKubernetesQueuePoliciesAndTheirBindings(t *testing.T) {
	for _, tc := range []struct {
		rule, source string
		queue        bool
	}{
		{"a queue configuration gets the queue policies", queueConfigMap("        placementrules:\n          - name: provided\n"), true},
		{"admission settings alone get none", "admissionController.accessControl.externalGroups: \"^admins$\"\n", false},
		{"the os resolver asks when a pod arrives: none", queueConfigMap("        usergroupresolver: {type: os}\n"), false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			objs, err := AllObjects(kubernetesSources(t, tc.source))
			if err != nil {
				t.Fatal(err)
			}
			actions := map[string]admissionregistrationv1.ValidationAction{}
			policies := 0
			for _, o := range objs {
				switch p := o.Object.(type) {
				case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
					if len(p.Spec.ValidationActions) != 1 || p.Spec.PolicyName != o.Name {
						t.Errorf("binding %s: %+v", o.Name, p.Spec)
						continue
					}
					actions[o.Name] = p.Spec.ValidationActions[0]
				case *admissionregistrationv1.ValidatingAdmissionPolicy:
					if o.Name == QueuePolicy || o.Name == QueueWarningsPolicy {
						policies++
					}
				}
			}
			if !tc.queue {
				if policies != 0 {
					t.Errorf("%d queue policies written", policies)
				}
				return
			}
			if policies != 2 || actions[QueuePolicy] != admissionregistrationv1.Deny || actions[QueueWarningsPolicy] != admissionregistrationv1.Warn {
				t.Errorf("queue policies %d, binding actions %v", policies, actions)
			}
		})
	}
}

// Limits says what the queue policies cannot know, and why a
// configuration gets none.
func TestKubernetesLimitsOfTheQueuePolicies(t *testing.T) {
	for _, tc := range []struct {
		rule, source string
		want, not    []string
	}{
		{"a static configuration: the queues that exist or drain", queueConfigMap(""),
			[]string{"cannot see which queues exist or drain"}, []string{"no queue admission policy"}},
		{"the os resolver: no queue policy, and why", queueConfigMap("        usergroupresolver: {type: os}\n"),
			[]string{"no queue admission policy", "os group resolver asks when a pod arrives"}, nil},
		{"no queue configuration: nothing to say", "admissionController.accessControl.bypassAuth: \"true\"\n", nil, []string{"queue"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			notes := strings.Join(Limits(kubernetesSources(t, tc.source)), "\n")
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("notes %q do not say %q", notes, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(notes, w) {
					t.Errorf("notes %q say %q", notes, w)
				}
			}
		})
	}
}

// A placement rule compiled into an expression longer than CEL's parser
// takes is refused, naming the rule and the limit; nothing is returned.
func TestKubernetesQueueRefusesARuleTooLongToParse(t *testing.T) {
	users := make([]string, 9000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%05d", i)
	}
	rules := "        placementrules:\n          - name: provided\n            filter:\n              type: allow\n              users: [" + strings.Join(users, ", ") + "]\n"
	objs, err := AllObjects(kubernetesSources(t, queueConfigMap(rules)))
	if err == nil || objs != nil {
		t.Fatalf("objects %d, error %v", len(objs), err)
	}
	for _, want := range []string{"placement rule #0 (provided)", "code points", fmt.Sprint(MaxExpression)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// A set too long for one expression is split over variables, each within
// CEL's expression size, and a lookup asks each.
func TestKubernetesQueueSetsSplitWithinTheExpressionSize(t *testing.T) {
	// 20,000 paths of 17 characters, written as "...": true, are about
	// 540,000 code points: seven variables of at most 90% of the limit.
	for _, tc := range []struct {
		rule   string
		keys   int
		shards int
	}{
		{"a small set is one variable", 10, 1},
		{"twenty thousand paths are several", 20000, 7},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			g := &queueCEL{}
			keys := make([]string, tc.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("root.teams.q%05d", i)
			}
			g.addSet("leafQueues", keys)
			if len(g.extraVars) != tc.shards {
				t.Fatalf("%d variables, want %d", len(g.extraVars), tc.shards)
			}
			for _, v := range g.extraVars {
				if n := v.expr.Len(); n > MaxExpression {
					t.Errorf("variable %s is %d code points", v.name, n)
				}
			}
			if got := strings.Count(g.in("leafQueues", cel.Id("x")).String(), "x in variables.leafQueues"); got != tc.shards {
				t.Errorf("a lookup asks %d variables, want %d", got, tc.shards)
			}
		})
	}
}

// The deny policy has an in-force policy: its binding takes the deny
// policy, by its name in the build, as its parameter and refuses when it
// is missing; it matches what the deny policy matches, and it and its
// binding come before the deny policy's binding in the stream. The
// static layout leaves it out (the API server takes no parameters there).
func TestKubernetesQueueInForcePolicyNeedsTheQueuePolicy(t *testing.T) {
	src := kubernetesSources(t, queueConfigMap("        placementrules:\n          - name: provided\n"))
	for _, name := range []string{"", "team-a"} {
		objs, err := Objects(src, Options{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		queue, inForce := Options{Name: name}.objectName(QueuePolicy), Options{Name: name}.objectName(QueueInForcePolicy)
		at := map[string]int{}
		var sentinel, deny *admissionregistrationv1.ValidatingAdmissionPolicy
		var binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
		for i, o := range objs {
			at[o.Kind+"/"+o.Name] = i
			switch p := o.Object.(type) {
			case *admissionregistrationv1.ValidatingAdmissionPolicy:
				if p.Name == inForce {
					sentinel = p
				}
				if p.Name == queue {
					deny = p
				}
			case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
				if p.Name == inForce {
					binding = p
				}
			}
		}
		if sentinel == nil || binding == nil || deny == nil {
			t.Fatalf("name %q: no %s with its binding beside %s: %s", name, inForce, queue, Summary(objs))
		}
		if k := sentinel.Spec.ParamKind; k == nil || k.APIVersion != "admissionregistration.k8s.io/v1" || k.Kind != "ValidatingAdmissionPolicy" {
			t.Errorf("%s: paramKind %+v", inForce, k)
		}
		r := binding.Spec.ParamRef
		if r == nil || r.Name != queue || r.Namespace != "" || r.Selector != nil || r.ParameterNotFoundAction == nil || *r.ParameterNotFoundAction != admissionregistrationv1.DenyAction {
			t.Errorf("%s: paramRef %+v, want %s with parameterNotFoundAction Deny", inForce, r, queue)
		}
		if binding.Spec.PolicyName != inForce || !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
			t.Errorf("%s binding: %+v", inForce, binding.Spec)
		}
		// YuniKorn bypasses kube-system by default: a failed apply must
		// not stop the cluster's own pods, and the selector is the only
		// thing evaluated before the missing parameter refuses.
		if m := binding.Spec.MatchResources; m == nil || m.NamespaceSelector == nil || len(m.NamespaceSelector.MatchExpressions) != 1 ||
			m.NamespaceSelector.MatchExpressions[0].Key != "kubernetes.io/metadata.name" || m.NamespaceSelector.MatchExpressions[0].Operator != "NotIn" ||
			!slices.Equal(m.NamespaceSelector.MatchExpressions[0].Values, []string{"kube-system"}) {
			t.Errorf("%s binding matches %+v, want every namespace but kube-system", inForce, binding.Spec.MatchResources)
		}
		if !reflect.DeepEqual(sentinel.Spec.MatchConstraints, deny.Spec.MatchConstraints) || *sentinel.Spec.FailurePolicy != admissionregistrationv1.Fail {
			t.Errorf("%s matches %+v, want %s's %+v", inForce, sentinel.Spec.MatchConstraints, queue, deny.Spec.MatchConstraints)
		}
		vap, vapb := "ValidatingAdmissionPolicy/", "ValidatingAdmissionPolicyBinding/"
		if !(at[vap+inForce] < at[vap+queue] && at[vapb+inForce] < at[vapb+queue]) {
			t.Errorf("stream order %s: want the in-force policy and binding before the queue policy's", Summary(objs))
		}
		// Small: every object but the queue policies fits client-side apply.
		for _, o := range objs {
			n, err := ClientApplyBytes(o)
			if err != nil {
				t.Fatal(err)
			}
			if o.Name == inForce && n > 4096 {
				t.Errorf("%s/%s records %d bytes", o.Kind, o.Name, n)
			}
		}
		l, err := Static(objs, "/etc/kubernetes/aclc")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Validating {
			if strings.HasPrefix(o.Name, inForce) {
				t.Errorf("static layout holds %s/%s", o.Kind, o.Name)
			}
		}
		if len(l.Validating) != len(objs)-2 {
			t.Errorf("static layout holds %d validating objects, want the build's %d but the in-force pair", len(l.Validating), len(objs))
		}
	}
}
