package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterStaticManifests starts the API server with the layout of
// `aclc build --target kubernetes --static-manifests`: the policies are in
// force from its first request, nothing an API client does removes them,
// and no API client can create an object of their names.
func TestClusterStaticManifests(t *testing.T) {
	if os.Getenv("ACLC_CLUSTER_E2E") == "" {
		t.Skip("ACLC_CLUSTER_E2E is not set: `make cluster-e2e` builds etcd, kube-apiserver and aclc and runs this test against them")
	}
	aclc, etcdBin, kasBin := env(t, "ACLC"), env(t, "ACLC_ETCD"), env(t, "ACLC_KUBE_APISERVER")
	ctx := context.Background()
	dir := t.TempDir()
	source := filepath.Join(dir, "yunikorn-configs.yaml")
	if err := os.WriteFile(source, []byte(policiesConfigMap()), 0o600); err != nil {
		t.Fatal(err)
	}
	static := filepath.Join(dir, "static")
	if code, out := run(t, "", aclc, "build", "--target", "kubernetes", "--decisions", "user-info,queue", "--static-manifests", static, "--output-file", static+"/", source); code != 0 {
		t.Fatalf("aclc build --target kubernetes --static-manifests: exit %d\n%s", code, out)
	}
	s := startAPIServer(t, etcdBin, kasBin, "--admission-control-config-file", filepath.Join(static, "admission-configuration.yaml"))
	adm := s.client(t, admin)
	setUp(t, ctx, adm)

	const staticPolicy = userInfoPolicy + ".static.k8s.io"
	asAlice, asBob := s.client(t, alice), s.client(t, bob)
	t.Run("in force from the start: a user's pod gets her user.info", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, "static-1", nil)
		if got, want := p.Annotations[userInfoKey], `{"user":"alice","groups":["devs","system:authenticated"]}`; got != want {
			t.Errorf("user.info %q, want %q", got, want)
		}
	})
	t.Run("in force from the start: a forged user.info is refused", func(t *testing.T) {
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod("static-2", map[string]string{userInfoKey: `{"user":"alice","groups":["devs"]}`}), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+staticPolicy+"'") || !strings.Contains(err.Error(), "is not allowed to set user annotation") {
			t.Fatalf("error %v, want a refusal by %s", err, staticPolicy)
		}
	})
	t.Run("not in the API, and no API client takes its name", func(t *testing.T) {
		api := adm.AdmissionregistrationV1().ValidatingAdmissionPolicies()
		if _, err := api.Get(ctx, staticPolicy, metav1.GetOptions{}); err == nil {
			t.Errorf("%s is served by the API", staticPolicy)
		}
		if err := api.Delete(ctx, staticPolicy, metav1.DeleteOptions{}); err == nil {
			t.Errorf("%s deleted through the API", staticPolicy)
		}
		// The suffix is reserved: a policy of that name is refused.
		vap := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: staticPolicy},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
					}}}},
				Validations: []admissionregistrationv1.Validation{{Expression: "true"}},
			},
		}
		if _, err := api.Create(ctx, vap, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), ".static.k8s.io") {
			t.Errorf("a ValidatingAdmissionPolicy named %s through the API: %v, want a refusal naming the reserved suffix", staticPolicy, err)
		}
	})
	// Still in force after the attempts.
	if _, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod("static-3", map[string]string{userInfoKey: `{"user":"alice","groups":["devs"]}`}), metav1.CreateOptions{}); err == nil {
		t.Errorf("a forged user.info admitted after the API attempts")
	}
}
