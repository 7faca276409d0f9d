package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The chart's objects for release "aclc" in aclcNS.
const (
	chartRegistration = "aclc-webhook-registration"
	chartService      = "aclc-webhook"
)

var chartConfigurations = []struct{ kind, name string }{
	{"MutatingWebhookConfiguration", "aclc-yunikorn-user-info"},
	{"ValidatingWebhookConfiguration", "aclc-yunikorn-queue"},
	{"ValidatingWebhookConfiguration", "aclc-yunikorn-config"},
}

// chartWebhooks counts the webhooks of each of the chart's configurations.
func chartWebhooks(t *testing.T, ctx context.Context, c kubernetes.Interface) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, cfg := range chartConfigurations {
		if cfg.kind == "MutatingWebhookConfiguration" {
			m, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, cfg.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out[cfg.name] = len(m.Webhooks)
			continue
		}
		v, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, cfg.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[cfg.name] = len(v.Webhooks)
	}
	return out
}

// TestClusterChartInstall installs the chart on a real API server, where
// no pod ever starts (there is no kubelet): the install must block
// nothing, kube-system included. A webhook started beside it with the
// chart's ServiceAccount registers nothing while no endpoint of the
// Service is ready, and the chart's webhooks exactly once one is; even
// then kube-system, which YuniKorn bypasses, is left out; and the
// ServiceAccount may touch no other webhook configuration.
func TestClusterChartInstall(t *testing.T) {
	helm := os.Getenv("ACLC_HELM")
	aclc, s, adm, _ := startCluster(t)
	if helm == "" {
		t.Skip("ACLC_HELM is not set (make helm builds it): the chart is not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	objs := applyChart(t, ctx, s, helm, "aclc", []string{"yunikorn.fromCluster=true", "webhook.config.enabled=true", "webhook.timeoutSeconds=2"}, false)
	kcSA, who := chartIdentity(t, ctx, s, adm, objs)
	t.Logf("installed %d objects; the webhook runs as %s", len(objs), who)

	for name, n := range chartWebhooks(t, ctx, adm) {
		if n != 0 {
			t.Errorf("%s has %d webhooks right after install, want none", name, n)
		}
	}
	asAlice := s.client(t, alice)
	n := 0
	podName := func() string { n++; return fmt.Sprintf("install-%d", n) }
	forged := map[string]string{userInfoKey: `{"user":"boss"}`}
	// The state before install: nothing checks, nothing is blocked.
	if _, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod in %s with no aclc pod ready: %v, want admitted as before the install", teamNS, err)
	}
	systemPod := func() error {
		p := pod(podName(), nil)
		p.Namespace = "kube-system"
		_, err := adm.CoreV1().Pods("kube-system").Create(ctx, p, metav1.CreateOptions{})
		return err
	}
	if err := systemPod(); err != nil {
		t.Errorf("a kube-system pod with no aclc pod ready: %v", err)
	}

	// A webhook with the chart's identity and flags: no endpoint of the
	// Service is ready, so it registers nothing.
	proc, _, _, _ := startWebhook(t, dir, aclc, kcSA, "--register", chartRegistration, "--register-namespace", aclcNS, "--register-interval", "500ms")
	eventually(t, 30*time.Second, "the webhook says it waits for a ready endpoint", func() error {
		if b, _ := os.ReadFile(proc.log); !strings.Contains(string(b), "no ready endpoint of Service "+aclcNS+"/"+chartService) {
			return fmt.Errorf("not yet:\n%s", tail(proc.log, 10))
		}
		return nil
	})
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: chartService + "-e2e", Namespace: aclcNS, Labels: map[string]string{discoveryv1.LabelServiceName: chartService}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.99.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: new(false)}}},
	}
	slice, err := adm.DiscoveryV1().EndpointSlices(aclcNS).Create(ctx, slice, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // four passes of --register-interval
	for name, n := range chartWebhooks(t, ctx, adm) {
		if n != 0 {
			t.Errorf("%s has %d webhooks with its only endpoint not ready, want none", name, n)
		}
	}

	// An endpoint becomes ready: every configuration gets its webhooks.
	slice.Endpoints[0].Conditions.Ready = new(true)
	if _, err := adm.DiscoveryV1().EndpointSlices(aclcNS).Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the chart's webhooks registered", func() error {
		for name, n := range chartWebhooks(t, ctx, adm) {
			if n != 1 {
				return fmt.Errorf("%s has %d webhooks", name, n)
			}
		}
		return nil
	})
	m, err := adm.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "aclc-yunikorn-user-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := m.Webhooks[0]
	if svc := w.ClientConfig.Service; svc == nil || svc.Name != chartService || svc.Namespace != aclcNS || *svc.Path != "/mutate" || len(w.ClientConfig.CABundle) == 0 {
		t.Errorf("registered clientConfig %+v, want Service %s/%s /mutate with the chart's CA", w.ClientConfig, aclcNS, chartService)
	}
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", w.FailurePolicy)
	}

	// In force now: the API server calls the Service (which no pod
	// backs here) for team-a, and refuses under Fail; kube-system, which
	// YuniKorn bypasses, and the release namespace are never sent.
	eventually(t, 30*time.Second, "team-a pods go to the webhook", func() error {
		_, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), nil), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `failed calling webhook "mutate.aclc-webhook.aclc-system.svc"`) {
			return fmt.Errorf("a team-a pod: %v, want the API server's failed calling webhook", err)
		}
		return nil
	})
	if err := systemPod(); err != nil {
		t.Errorf("a kube-system pod with the webhooks in force and unreachable: %v, want admitted (left out)", err)
	}
	aclcPod := pod(podName(), nil)
	aclcPod.Namespace = aclcNS
	if _, err := adm.CoreV1().Pods(aclcNS).Create(ctx, aclcPod, metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod of the release namespace with the webhooks in force and unreachable: %v", err)
	}

	// Something empties a configuration (an upgrade from a chart that
	// wrote it whole): written again.
	m.Webhooks = nil
	if _, err := adm.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the emptied configuration written again", func() error {
		if n := chartWebhooks(t, ctx, adm)["aclc-yunikorn-user-info"]; n != 1 {
			return fmt.Errorf("%d webhooks", n)
		}
		return nil
	})

	// The ServiceAccount may update the chart's configurations and no
	// other, and may create none.
	other := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "somebody-elses"}}
	if other, err = adm.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := s.clientFromKubeconfig(t, kcSA)
	if _, err := sa.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, other, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the chart's ServiceAccount updating another configuration: %v, want forbidden", err)
	}
	fresh := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "made-by-aclc"}}
	if _, err := sa.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, fresh, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the chart's ServiceAccount creating a configuration: %v, want forbidden", err)
	}
	if err := sa.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "aclc-yunikorn-user-info", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the chart's ServiceAccount deleting its configuration: %v, want forbidden", err)
	}
	if _, err := sa.CoreV1().ConfigMaps(aclcNS).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: chartRegistration, Namespace: aclcNS}}, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the chart's ServiceAccount writing its registration ConfigMap: %v, want forbidden", err)
	}
	proc.stop(t)
}

// clientFromKubeconfig is a clientset for the kubeconfig file at path.
func (s *apiServer) clientFromKubeconfig(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}
