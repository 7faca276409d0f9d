package charts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// The source the policies of these tests are built from.
const policiesSource = "../examples/kubernetes/yunikorn-configs.yaml"

var (
	aclcOnce sync.Once
	aclcBin  string
	aclcErr  error
)

// aclc is the aclc binary: $ACLC (make chart-check sets it), else one
// built here.
func aclc(t *testing.T) string {
	t.Helper()
	if a := os.Getenv("ACLC"); a != "" {
		return a
	}
	aclcOnce.Do(func() {
		dir, err := os.MkdirTemp("", "aclc-chart-test")
		if err != nil {
			aclcErr = err
			return
		}
		aclcBin = filepath.Join(dir, "aclc")
		cmd := exec.Command("go", "build", "-o", aclcBin, "./cmd/aclc")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			aclcErr = fmt.Errorf("go build ./cmd/aclc: %v\n%s", err, out)
		}
	})
	if aclcErr != nil {
		t.Fatal(aclcErr)
	}
	return aclcBin
}

// buildPolicies writes the policies of aclc build --target kubernetes for
// src into a file and returns its path and content.
func buildPolicies(t *testing.T, src string) (string, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "policies.yaml")
	cmd := exec.Command(aclc(t), "build", "--target", "kubernetes", "--output-file", out, src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aclc build --target kubernetes: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, b
}

// helmTemplateArgs runs helm template with arguments of its own (such as
// --set-file), for the release in its namespace.
func helmTemplateArgs(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	all := append([]string{"template", release, chartDir, "--namespace", namespace, "--kube-version", "1.36.0"}, args...)
	cmd := exec.Command(helm(t), all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %v\n%s", strings.Join(all, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// policyObject is one admission policy or binding, decoded strictly.
type policyObject struct {
	kind, name string
	labels     map[string]string
	spec       any
}

// decodePolicies decodes a YAML stream of the four policy kinds strictly
// into their Kubernetes types; any other kind is an error.
func decodePolicies(t *testing.T, stream []byte) []policyObject {
	t.Helper()
	var objs []policyObject
	for _, doc := range docSep.Split(string(stream), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		var o policyObject
		var err error
		switch head.Kind {
		case "MutatingAdmissionPolicy":
			var p admissionregistrationv1.MutatingAdmissionPolicy
			err = strict([]byte(doc), &p)
			o = policyObject{p.Kind, p.Name, p.Labels, p.Spec}
		case "MutatingAdmissionPolicyBinding":
			var p admissionregistrationv1.MutatingAdmissionPolicyBinding
			err = strict([]byte(doc), &p)
			o = policyObject{p.Kind, p.Name, p.Labels, p.Spec}
		case "ValidatingAdmissionPolicy":
			var p admissionregistrationv1.ValidatingAdmissionPolicy
			err = strict([]byte(doc), &p)
			o = policyObject{p.Kind, p.Name, p.Labels, p.Spec}
		case "ValidatingAdmissionPolicyBinding":
			var p admissionregistrationv1.ValidatingAdmissionPolicyBinding
			err = strict([]byte(doc), &p)
			o = policyObject{p.Kind, p.Name, p.Labels, p.Spec}
		default:
			t.Fatalf("a %q where only admission policies belong:\n%s", head.Kind, doc)
		}
		if err != nil {
			t.Fatalf("%s: %v", head.Kind, err)
		}
		objs = append(objs, o)
	}
	return objs
}

// TestChartPoliciesMode pins mode=policies: the objects aclc wrote, each
// unchanged but for the chart's labels, and nothing of the webhook.
func TestChartPoliciesMode(t *testing.T) {
	helm(t)
	file, stream := buildPolicies(t, policiesSource)
	want := decodePolicies(t, stream)
	if len(want) < 4 {
		t.Fatalf("the build wrote %d objects, want the user.info policies and bindings at least", len(want))
	}
	for _, tt := range []struct {
		name  string
		args  []string
		serve bool
	}{
		{"the policies alone", nil, false},
		{"the policies beside aclc serve", []string{"--set", "serve.enabled=true"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := helmTemplateArgs(t, append([]string{"--set", "mode=policies", "--set-file", "policies=" + file}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var policies []byte
			var others []string
			for _, doc := range docSep.Split(string(out), -1) {
				if strings.Contains(doc, "# Source: aclc/templates/policies.yaml") {
					policies = append(append(policies, doc...), "\n---\n"...)
					continue
				}
				if k := kindOf(doc); k != "" {
					others = append(others, k)
				}
			}
			got := decodePolicies(t, policies)
			if len(got) != len(want) {
				t.Fatalf("%d policy objects rendered, want the build's %d", len(got), len(want))
			}
			// Helm writes the manifests grouped by kind, not in the
			// build's order: each of the build's objects, found by kind
			// and name.
			rendered := map[string]int{}
			for i, g := range got {
				rendered[g.kind+"/"+g.name] = i
			}
			for _, w := range want {
				i, ok := rendered[w.kind+"/"+w.name]
				if !ok {
					t.Errorf("%s/%s: not rendered", w.kind, w.name)
					continue
				}
				if !reflect.DeepEqual(got[i].spec, w.spec) {
					t.Errorf("%s/%s: the spec differs from the build's", w.kind, w.name)
				}
				if got[i].labels["app.kubernetes.io/instance"] != release || got[i].labels["app.kubernetes.io/managed-by"] != "Helm" {
					t.Errorf("%s/%s: labels %v, want the chart's", w.kind, w.name, got[i].labels)
				}
			}
			// Nothing of the webhook; serve and what it runs with only
			// when asked for.
			for _, k := range others {
				if strings.Contains(k, "Webhook") || strings.HasPrefix(k, "Secret ") || strings.HasPrefix(k, "PodDisruptionBudget ") ||
					k == "Deployment aclc-webhook" || k == "Service aclc-webhook" {
					t.Errorf("mode=policies renders %s", k)
				}
			}
			hasServe := slices.Contains(others, "Deployment aclc-serve")
			hasRBAC := slices.ContainsFunc(others, func(k string) bool { return strings.HasPrefix(k, "ServiceAccount ") || strings.HasPrefix(k, "Role ") })
			if hasServe != tt.serve || hasRBAC != tt.serve {
				t.Errorf("serve rendered %v, ServiceAccount or RBAC %v, want %v: %v", hasServe, hasRBAC, tt.serve, others)
			}
		})
	}
}

// kindOf is "Kind name" of a rendered document, "" for none.
func kindOf(doc string) string {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil || head.Kind == "" {
		return ""
	}
	return head.Kind + " " + head.Metadata.Name
}

// TestChartPoliciesModeRefuses pins what mode=policies refuses, with the
// reason in helm's error.
func TestChartPoliciesModeRefuses(t *testing.T) {
	helm(t)
	file, _ := buildPolicies(t, policiesSource)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		rule string
		args []string
		want string
	}{
		{"mode policies needs the policies", []string{"--set", "mode=policies"}, "give them with --set-file policies=FILE"},
		{"policies with mode webhook would be ignored", []string{"--set-file", "policies=" + file}, "policies is set but mode is webhook"},
		{"a mode other than webhook or policies", []string{"--set", "mode=both"}, "mode"},
		{"an object of another kind is not smuggled in", []string{"--set", "mode=policies", "--set-file",
			"policies=" + write("secret.yaml", "apiVersion: admissionregistration.k8s.io/v1\nkind: Secret\nmetadata: {name: x}\n")}, `policies: document 1 is a "Secret"`},
		{"another API version is refused", []string{"--set", "mode=policies", "--set-file",
			"policies=" + write("beta.yaml", "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\n")}, `apiVersion "admissionregistration.k8s.io/v1beta1"`},
		{"a document that is not YAML", []string{"--set", "mode=policies", "--set-file", "policies=" + write("bad.yaml", "---\nkind: [\n")}, "policies: document 2 is not YAML"},
		{"comments alone are no policies", []string{"--set", "mode=policies", "--set-file", "policies=" + write("empty.yaml", "# nothing\n---\n")}, "no object"},
		{"the ServiceMonitor scrapes a webhook mode policies does not install", []string{"--set", "mode=policies", "--set-file", "policies=" + file, "--set", "serviceMonitor.enabled=true"}, "serviceMonitor.enabled"},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			_, err := helmTemplateArgs(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
