package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	regNS  = "aclc-system"
	regCM  = "aclc-webhook-registration"
	regSvc = "aclc-webhook"
)

const mutatingYAML = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: aclc-yunikorn-user-info
webhooks:
  - name: mutate.aclc-webhook.aclc-system.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Fail
    clientConfig:
      service: {name: aclc-webhook, namespace: aclc-system, path: /mutate, port: 443}
    rules:
      - operations: ["CREATE"]
        apiGroups: [""]
        apiVersions: ["v1"]
        resources: ["pods"]
`

const validatingYAML = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: aclc-yunikorn-queue
webhooks:
  - name: validate-queue.aclc-webhook.aclc-system.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Ignore
    clientConfig:
      service: {name: aclc-webhook, namespace: aclc-system, path: /validate-queue, port: 443}
      caBundle: Y2E=
`

func registrationObjects(data map[string]string) []any {
	return []any{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: regCM, Namespace: regNS}, Data: data},
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "aclc-yunikorn-user-info"}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "aclc-yunikorn-queue"}},
	}
}

func endpointSlice(ready *bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: regSvc + "-abc", Namespace: regNS, Labels: map[string]string{discoveryv1.LabelServiceName: regSvc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}},
	}
}

func newFake(objs ...any) *fake.Clientset {
	c := fake.NewClientset()
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			c.Tracker().Add(o)
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			c.Tracker().Add(o)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			c.Tracker().Add(o)
		case *discoveryv1.EndpointSlice:
			c.Tracker().Add(o)
		}
	}
	return c
}

func liveWebhooks(t *testing.T, c *fake.Clientset) (mutating, validating int) {
	t.Helper()
	m, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), "aclc-yunikorn-user-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), "aclc-yunikorn-queue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(m.Webhooks), len(v.Webhooks)
}

func ptr[T any](v T) *T { return &v }

// TestRegistrationWaitsForAReadyEndpoint pins that nothing is registered
// while no endpoint of the webhook's Service is ready: an install whose
// pods never start blocks nothing.
func TestRegistrationWaitsForAReadyEndpoint(t *testing.T) {
	data := map[string]string{"user-info.yaml": mutatingYAML, "queue.yaml": validatingYAML}
	for _, tc := range []struct {
		name  string
		slice *discoveryv1.EndpointSlice
	}{
		{"no EndpointSlice", nil},
		{"an endpoint not ready", endpointSlice(ptr(false))},
		{"an endpoint whose readiness is not known", endpointSlice(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := registrationObjects(data)
			if tc.slice != nil {
				objs = append(objs, tc.slice)
			}
			c := newFake(objs...)
			r := &Registration{Client: c, Namespace: regNS, ConfigMap: regCM}
			res, err := r.Once(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Waiting, "no ready endpoint of Service aclc-system/aclc-webhook") || len(res.Registered) > 0 {
				t.Errorf("result %+v, want waiting for aclc-webhook and nothing registered", res)
			}
			if m, v := liveWebhooks(t, c); m != 0 || v != 0 {
				t.Errorf("live webhooks %d mutating, %d validating; want none", m, v)
			}
		})
	}
}

// TestRegistrationFillsInOnceReady pins that with a ready endpoint every
// configuration gets the ConfigMap's webhooks, is written once, and is
// written again when something empties it.
func TestRegistrationFillsInOnceReady(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newFake(append(registrationObjects(map[string]string{"user-info.yaml": mutatingYAML, "queue.yaml": validatingYAML, "README": "not a configuration"}), endpointSlice(ptr(true)))...)
	r := &Registration{Client: c, Namespace: regNS, ConfigMap: regCM, CAFile: ca}
	ctx := context.Background()
	res, err := r.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Registered) != 2 || res.Waiting != "" {
		t.Fatalf("first pass %+v, want both registered", res)
	}
	m, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "aclc-yunikorn-user-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Webhooks) != 1 || m.Webhooks[0].ClientConfig.Service.Path == nil || *m.Webhooks[0].ClientConfig.Service.Path != "/mutate" {
		t.Fatalf("mutating webhooks %+v, want /mutate", m.Webhooks)
	}
	if !strings.HasPrefix(string(m.Webhooks[0].ClientConfig.CABundle), "-----BEGIN CERTIFICATE-----") {
		t.Errorf("caBundle %q, want the CA file's", m.Webhooks[0].ClientConfig.CABundle)
	}
	v, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "aclc-yunikorn-queue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Webhooks[0].ClientConfig.CABundle) != "ca" {
		t.Errorf("caBundle %q: the ConfigMap's own must be kept", v.Webhooks[0].ClientConfig.CABundle)
	}
	res, err = r.Once(ctx)
	if err != nil || len(res.Registered) != 0 || len(res.Current) != 2 {
		t.Fatalf("second pass %+v, %v; want both current, nothing written", res, err)
	}
	// An upgrade from a chart that set the webhooks itself empties them.
	v.Webhooks = nil
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, v, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = r.Once(ctx)
	if err != nil || len(res.Registered) != 1 || res.Registered[0] != "ValidatingWebhookConfiguration/aclc-yunikorn-queue" {
		t.Fatalf("after emptying: %+v, %v; want the validating one written again", res, err)
	}
}

// TestRegistrationRefusesWhatItMayNotRegister pins that a ConfigMap naming
// a URL, a Service of another namespace, another kind or a configuration
// that does not exist writes nothing.
func TestRegistrationRefusesWhatItMayNotRegister(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a URL", strings.Replace(mutatingYAML, "service: {name: aclc-webhook, namespace: aclc-system, path: /mutate, port: 443}", "url: https://evil.example/mutate", 1), "calls a URL"},
		{"another namespace", strings.Replace(mutatingYAML, "namespace: aclc-system", "namespace: other", 1), "calls Service other/aclc-webhook"},
		{"another kind", strings.Replace(mutatingYAML, "MutatingWebhookConfiguration", "ClusterRole", 1), "is not an admissionregistration.k8s.io/v1 webhook configuration"},
		{"an unknown field", strings.Replace(mutatingYAML, "sideEffects: None", "sideEffects: None\n    surprise: 1", 1), "surprise"},
		{"no webhooks", "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: aclc-yunikorn-user-info}\n", "has no webhooks"},
		{"a configuration the chart did not create", strings.Replace(mutatingYAML, "name: aclc-yunikorn-user-info", "name: somebody-elses", 1), "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFake(append(registrationObjects(map[string]string{"user-info.yaml": tc.yaml}), endpointSlice(ptr(true)))...)
			r := &Registration{Client: c, Namespace: regNS, ConfigMap: regCM}
			res, err := r.Once(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
			if len(res.Registered) > 0 {
				t.Errorf("registered %v", res.Registered)
			}
			if m, _ := liveWebhooks(t, c); m != 0 {
				t.Errorf("%d mutating webhooks registered, want none", m)
			}
		})
	}
}
