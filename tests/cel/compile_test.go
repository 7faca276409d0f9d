package cel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The settings the policies are built from in the compile test: YuniKorn's
// defaults, bypassAuth, and pattern lists with the characters a CEL string
// literal must escape.
var compileSources = []struct{ name, text string }{
	{"defaults", "admissionController.webHook.amServiceName: yunikorn-admission-controller-service\n"},
	{"bypassAuth", "admissionController.accessControl.bypassAuth: \"true\"\n"},
	{"trustControllers off, every list set", `admissionController.accessControl.trustControllers: "false"
admissionController.accessControl.systemUsers: "^system:serviceaccount:kube-system:,^system:kube-controller-manager$"
admissionController.accessControl.externalUsers: "^(?i)Front-End$,\"quoted\",back\\slash"
admissionController.accessControl.externalGroups: "^\\p{Greek}+$,^grp\\d{2}$,é,\t tab"
admissionController.filtering.processNamespaces: "^team-"
admissionController.filtering.bypassNamespaces: "^kube-system$,^(?P<n>ops)$"
admissionController.filtering.labelNamespaces: "^team-a$"
admissionController.filtering.noLabelNamespaces: "^team-b$"
`},
	{"empty lists", `admissionController.accessControl.systemUsers: ""
admissionController.filtering.bypassNamespaces: ""
`},
}

// TestPoliciesCompileAtCreation compiles every expression of the generated
// policies as the API server does when a policy is created or updated:
// the expressions new (environment.NewExpressions, the strictest
// environment of this release), variables composed, validations and
// message expressions with their own declarations, the mutation with the
// JSON Patch types. A refusal here is a policy kubectl apply would refuse.
func TestPoliciesCompileAtCreation(t *testing.T) {
	sources := compileSources
	// Close to the longest expression aclc writes (kubernetes.MaxExpression
	// code points), which CEL's parser must still take.
	long := make([]string, 1400)
	for i := range long {
		long[i] = fmt.Sprintf("^system:serviceaccount:team-%d:runner$", i)
	}
	sources = append(sources, struct{ name, text string }{"1400 external users", "admissionController.accessControl.externalUsers: \"" + strings.Join(long, ",") + "\"\n"})
	// A queue tree 60 levels deep: the queue policies cut paths at every
	// level, in flat lists (CEL's parser refuses nesting deeper than 250).
	deep := "partitions:\n  - name: default\n    placementrules:\n      - name: provided\n        create: true\n    queues:\n      - name: root\n"
	for i := range 60 {
		deep += strings.Repeat("  ", 2*i+4) + "queues:\n" + strings.Repeat("  ", 2*i+4) + fmt.Sprintf("  - name: l%d\n", i)
	}
	sources = append(sources, struct{ name, text string }{"a queue tree 60 levels deep", deep})
	root := repoRoot(t)
	// With queue configurations: the queue policies too.
	for _, ex := range []string{"examples/admission/configmap.yaml", "examples/yunikorn/helm/yunikorn-configs.yaml", "examples/admission/queue.yaml", "examples/admission/configmap-with-queues.yaml"} {
		raw, err := os.ReadFile(filepath.Join(root, ex))
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, struct{ name, text string }{ex, string(raw)})
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(src.text)}})
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range decodeStrict(t, docs) {
				switch p := obj.(type) {
				case *admissionregistrationv1.ValidatingAdmissionPolicy:
					compileValidating(t, p)
				case *admissionregistrationv1.MutatingAdmissionPolicy:
					compileMutating(t, p)
				}
			}
		})
	}
}

func newCompiler(t *testing.T) *plugincel.CompositedCompiler {
	t.Helper()
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func compileVariables(t *testing.T, c *plugincel.CompositedCompiler, policy string, vars []admissionregistrationv1.Variable, opts plugincel.OptionalVariableDeclarations) {
	t.Helper()
	for _, v := range vars {
		if r := c.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.NewExpressions); r.Error != nil {
			t.Errorf("%s: variable %s: %v", policy, v.Name, r.Error)
		}
	}
}

func compileValidating(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	c := newCompiler(t)
	// The API server declares params for a policy with a paramKind (the
	// queue check's in-force policy), as it compiles it at creation.
	hasParams := p.Spec.ParamKind != nil
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true, HasParams: hasParams}
	compileVariables(t, c, "ValidatingAdmissionPolicy", p.Spec.Variables, opts)
	for i, v := range p.Spec.Validations {
		if r := c.CompileCELExpression(&validating.ValidationCondition{Expression: v.Expression}, opts, environment.NewExpressions); r.Error != nil {
			t.Errorf("validation %d: %v", i, r.Error)
		}
		if v.MessageExpression == "" {
			continue
		}
		if r := c.CompileCELExpression(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, plugincel.OptionalVariableDeclarations{HasParams: hasParams}, environment.NewExpressions); r.Error != nil {
			t.Errorf("validation %d messageExpression: %v", i, r.Error)
		}
	}
}

func compileMutating(t *testing.T, p *admissionregistrationv1.MutatingAdmissionPolicy) {
	c := newCompiler(t)
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	compileVariables(t, c, "MutatingAdmissionPolicy", p.Spec.Variables, opts)
	opts.HasPatchTypes = true
	for i, m := range p.Spec.Mutations {
		if m.JSONPatch == nil {
			t.Fatalf("mutation %d is not a JSON Patch", i)
		}
		if r := c.CompileCELExpression(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, opts, environment.NewExpressions); r.Error != nil {
			t.Errorf("mutation %d: %v", i, r.Error)
		}
	}
}

// A file resolver that resolves every user: the queue policy compiles in
// its answers and no table of errors, and the API server takes it.
func TestQueuePolicyOfAFileResolverCompiles(t *testing.T) {
	groups := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(groups, []byte("alice: [dev, ops]\nbob: [test]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &translate.Sources{}
	if err := s.AddInputs([]translate.Input{{Name: "queues.yaml", Data: []byte("partitions:\n  - name: default\n    placementrules:\n      - name: provided\n    queues:\n      - name: root\n        submitacl: \" dev\"\n")}}, translate.KindAuto); err != nil {
		t.Fatal(err)
	}
	s, err := s.WithGroupResolution("file="+groups, true)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubernetes.Objects(s, kubernetes.Options{Decisions: []string{translate.GatekeeperQueue}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if p, ok := o.Object.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			compileValidating(t, p)
		}
	}
}
