// Package charts holds the tests of the Helm charts beside it: each chart
// is rendered with helm and every manifest decoded strictly into the
// Kubernetes API types it claims to be.
package charts

import (
	"bytes"
	"cmp"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "aclc"
	release  = "aclc"
	// The release's own namespace, as the README installs it: never
	// YuniKorn's, which the chart refuses.
	namespace = "aclc-system"
	// YuniKorn's namespace (yunikorn.namespace), where its ConfigMaps are.
	yunikornNamespace = "yunikorn"
	// The Service's name for release "aclc": the name `aclc webhook
	// manifests` uses by default too.
	webhookService = "aclc-webhook"
)

// certManagerCertificate and certManagerIssuer are the cert-manager.io/v1
// fields the chart sets (cert-manager's Go types would pull its whole
// module in); decoding is as strict as for the Kubernetes types.
type certManagerCertificate struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   objectMeta      `json:"metadata"`
	Spec       certificateSpec `json:"spec"`
}

type objectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type certificateSpec struct {
	SecretName  string   `json:"secretName"`
	CommonName  string   `json:"commonName"`
	DNSNames    []string `json:"dnsNames"`
	Duration    string   `json:"duration"`
	RenewBefore string   `json:"renewBefore"`
	PrivateKey  struct {
		Algorithm      string `json:"algorithm"`
		Size           int    `json:"size"`
		RotationPolicy string `json:"rotationPolicy"`
	} `json:"privateKey"`
	Usages    []string `json:"usages"`
	IssuerRef struct {
		Name  string `json:"name"`
		Kind  string `json:"kind"`
		Group string `json:"group"`
	} `json:"issuerRef"`
}

// serviceMonitor is the monitoring.coreos.com/v1 ServiceMonitor fields the
// chart sets, decoded as strictly.
type serviceMonitor struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Scheme        string `json:"scheme"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type certManagerIssuer struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		SelfSigned *struct{} `json:"selfSigned"`
	} `json:"spec"`
}

// rendered is a chart's output, decoded by kind and name.
type rendered struct {
	deployments      map[string]*appsv1.Deployment
	services         map[string]*corev1.Service
	secrets          map[string]*corev1.Secret
	serviceAccounts  map[string]*corev1.ServiceAccount
	pdbs             map[string]*policyv1.PodDisruptionBudget
	roles            map[string]*rbacv1.Role
	roleBindings     map[string]*rbacv1.RoleBinding
	clusterRoles     map[string]*rbacv1.ClusterRole
	clusterRoleBinds map[string]*rbacv1.ClusterRoleBinding
	mutating         map[string]*admissionregistrationv1.MutatingWebhookConfiguration
	validating       map[string]*admissionregistrationv1.ValidatingWebhookConfiguration
	certificates     map[string]*certManagerCertificate
	issuers          map[string]*certManagerIssuer
	networkPolicies  map[string]*networkingv1.NetworkPolicy
	serviceMonitors  map[string]*serviceMonitor
	configMaps       map[string]*corev1.ConfigMap
	// empty are the webhook configurations installed without webhooks
	// (webhook.registration=pod), by name: their kind. Their webhooks, kept
	// in the registration ConfigMap, are in mutating and validating.
	empty map[string]string
	// labels are every object's metadata.labels, by "Kind name".
	labels map[string]map[string]string
}

func helm(t *testing.T) string {
	t.Helper()
	h := os.Getenv("ACLC_HELM")
	if h == "" {
		t.Skip("ACLC_HELM is not set: `make chart-check` builds helm and runs this test with it")
	}
	return h
}

// render runs helm template with the --set values and decodes the result.
func render(t *testing.T, sets ...string) *rendered {
	t.Helper()
	out, err := helmTemplate(t, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, out)
}

func helmTemplate(t *testing.T, sets ...string) ([]byte, error) {
	t.Helper()
	return helmTemplateIn(t, namespace, sets...)
}

// helmTemplateIn runs helm template for a release in namespace ns.
func helmTemplateIn(t *testing.T, ns string, sets ...string) ([]byte, error) {
	t.Helper()
	// helm built with go install has no Kubernetes version stamped in
	// and would render for v1.20, below the chart's kubeVersion.
	args := []string{"template", release, chartDir, "--namespace", ns, "--kube-version", "1.33.0"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(helm(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// strict decodes YAML into v as the API server's strict field validation
// does: duplicate keys and fields v's type does not have are errors, and
// names match case-sensitively (encoding/json would take
// readOnlyRootFileSystem for readOnlyRootFilesystem). A misspelt field in a
// template fails here, not in a cluster that would drop or refuse it.
func strict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

func decodeAll(t *testing.T, out []byte) *rendered {
	t.Helper()
	r := &rendered{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		secrets: map[string]*corev1.Secret{}, serviceAccounts: map[string]*corev1.ServiceAccount{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, roles: map[string]*rbacv1.Role{},
		roleBindings: map[string]*rbacv1.RoleBinding{}, clusterRoles: map[string]*rbacv1.ClusterRole{},
		clusterRoleBinds: map[string]*rbacv1.ClusterRoleBinding{},
		mutating:         map[string]*admissionregistrationv1.MutatingWebhookConfiguration{},
		validating:       map[string]*admissionregistrationv1.ValidatingWebhookConfiguration{},
		certificates:     map[string]*certManagerCertificate{}, issuers: map[string]*certManagerIssuer{},
		networkPolicies: map[string]*networkingv1.NetworkPolicy{},
		serviceMonitors: map[string]*serviceMonitor{}, labels: map[string]map[string]string{},
		configMaps: map[string]*corev1.ConfigMap{}, empty: map[string]string{},
	}
	docs := docSep.Split(string(out), -1)
	for len(docs) > 0 {
		doc := docs[0]
		docs = docs[1:]
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if head.Kind == "" {
			if strings.TrimSpace(stripComments(doc)) != "" {
				t.Fatalf("a document without kind:\n%s", doc)
			}
			continue
		}
		name := head.Metadata.Name
		r.labels[head.Kind+" "+name] = head.Metadata.Labels
		var err error
		decode := func(m any, v any) {
			if err = strict([]byte(doc), v); err == nil {
				if dup := reflectPut(m, name, v); dup {
					t.Errorf("%s %q rendered twice", head.Kind, name)
				}
			}
		}
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			decode(r.deployments, &appsv1.Deployment{})
		case "v1 Service":
			decode(r.services, &corev1.Service{})
		case "v1 Secret":
			decode(r.secrets, &corev1.Secret{})
		case "v1 ServiceAccount":
			decode(r.serviceAccounts, &corev1.ServiceAccount{})
		case "policy/v1 PodDisruptionBudget":
			decode(r.pdbs, &policyv1.PodDisruptionBudget{})
		case "rbac.authorization.k8s.io/v1 Role":
			decode(r.roles, &rbacv1.Role{})
		case "rbac.authorization.k8s.io/v1 RoleBinding":
			decode(r.roleBindings, &rbacv1.RoleBinding{})
		case "rbac.authorization.k8s.io/v1 ClusterRole":
			decode(r.clusterRoles, &rbacv1.ClusterRole{})
		case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
			decode(r.clusterRoleBinds, &rbacv1.ClusterRoleBinding{})
		case "admissionregistration.k8s.io/v1 MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err = strict([]byte(doc), &c); err == nil && len(c.Webhooks) == 0 {
				r.empty[name] = head.Kind
				break
			}
			decode(r.mutating, &admissionregistrationv1.MutatingWebhookConfiguration{})
		case "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err = strict([]byte(doc), &c); err == nil && len(c.Webhooks) == 0 {
				r.empty[name] = head.Kind
				break
			}
			decode(r.validating, &admissionregistrationv1.ValidatingWebhookConfiguration{})
		case "v1 ConfigMap":
			var cm corev1.ConfigMap
			decode(r.configMaps, &cm)
			if err == nil && strings.HasSuffix(name, "-webhook-registration") {
				// The webhooks the pods put in force, decoded as if
				// rendered: one configuration per key.
				for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
					docs = append(docs, cm.Data[k])
				}
			}
		case "cert-manager.io/v1 Certificate":
			decode(r.certificates, &certManagerCertificate{})
		case "cert-manager.io/v1 Issuer":
			decode(r.issuers, &certManagerIssuer{})
		case "networking.k8s.io/v1 NetworkPolicy":
			decode(r.networkPolicies, &networkingv1.NetworkPolicy{})
		case "monitoring.coreos.com/v1 ServiceMonitor":
			decode(r.serviceMonitors, &serviceMonitor{})
		default:
			t.Fatalf("unexpected %s %s %q: add it to the test", head.APIVersion, head.Kind, name)
		}
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", head.Kind, name, err, doc)
		}
	}
	return r
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// reflectPut stores v under name in the typed map m, reporting a duplicate.
func reflectPut(m any, name string, v any) bool {
	switch m := m.(type) {
	case map[string]*appsv1.Deployment:
		return put(m, name, v.(*appsv1.Deployment))
	case map[string]*corev1.Service:
		return put(m, name, v.(*corev1.Service))
	case map[string]*corev1.Secret:
		return put(m, name, v.(*corev1.Secret))
	case map[string]*corev1.ServiceAccount:
		return put(m, name, v.(*corev1.ServiceAccount))
	case map[string]*corev1.ConfigMap:
		return put(m, name, v.(*corev1.ConfigMap))
	case map[string]*policyv1.PodDisruptionBudget:
		return put(m, name, v.(*policyv1.PodDisruptionBudget))
	case map[string]*rbacv1.Role:
		return put(m, name, v.(*rbacv1.Role))
	case map[string]*rbacv1.RoleBinding:
		return put(m, name, v.(*rbacv1.RoleBinding))
	case map[string]*rbacv1.ClusterRole:
		return put(m, name, v.(*rbacv1.ClusterRole))
	case map[string]*rbacv1.ClusterRoleBinding:
		return put(m, name, v.(*rbacv1.ClusterRoleBinding))
	case map[string]*admissionregistrationv1.MutatingWebhookConfiguration:
		return put(m, name, v.(*admissionregistrationv1.MutatingWebhookConfiguration))
	case map[string]*admissionregistrationv1.ValidatingWebhookConfiguration:
		return put(m, name, v.(*admissionregistrationv1.ValidatingWebhookConfiguration))
	case map[string]*certManagerCertificate:
		return put(m, name, v.(*certManagerCertificate))
	case map[string]*certManagerIssuer:
		return put(m, name, v.(*certManagerIssuer))
	case map[string]*networkingv1.NetworkPolicy:
		return put(m, name, v.(*networkingv1.NetworkPolicy))
	case map[string]*serviceMonitor:
		return put(m, name, v.(*serviceMonitor))
	}
	panic(fmt.Sprintf("no map for %T", v))
}

func put[T any](m map[string]T, name string, v T) bool {
	_, dup := m[name]
	m[name] = v
	return dup
}

// webhookSpec is what the two kinds of webhook share and the test checks.
type webhookSpec struct {
	kind              string
	annotations       map[string]string
	name              string
	client            admissionregistrationv1.WebhookClientConfig
	failurePolicy     *admissionregistrationv1.FailurePolicyType
	sideEffects       *admissionregistrationv1.SideEffectClass
	timeoutSeconds    *int32
	reviewVersions    []string
	namespaceSelector []string // the NotIn values on kubernetes.io/metadata.name
	rules             []admissionregistrationv1.RuleWithOperations
}

// queueConfiguration is the name of the placement check's configuration.
const queueConfiguration = "aclc-yunikorn-queue"

// theWebhook returns the one user.info webhook the chart registers, failing
// unless there is exactly one such configuration of exactly one kind with
// one webhook; the placement check (queueConfiguration) is not one of them.
func (r *rendered) theWebhook(t *testing.T) webhookSpec {
	t.Helper()
	validating := len(r.validating)
	if _, ok := r.validating[queueConfiguration]; ok {
		validating--
	}
	if len(r.mutating)+validating != 1 {
		t.Fatalf("%d mutating and %d validating user.info webhook configurations: want exactly one (never both)", len(r.mutating), validating)
	}
	var w webhookSpec
	notIn := func(sel *metav1.LabelSelector) []string {
		if sel == nil {
			return nil
		}
		for _, e := range sel.MatchExpressions {
			if e.Key == "kubernetes.io/metadata.name" && e.Operator == "NotIn" {
				return e.Values
			}
		}
		return nil
	}
	for _, c := range r.mutating {
		if len(c.Webhooks) != 1 {
			t.Fatalf("%d webhooks, want 1", len(c.Webhooks))
		}
		h := c.Webhooks[0]
		w = webhookSpec{"mutating", c.Annotations, h.Name, h.ClientConfig, h.FailurePolicy, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, notIn(h.NamespaceSelector), h.Rules}
	}
	for name, c := range r.validating {
		if name == queueConfiguration {
			continue
		}
		if len(c.Webhooks) != 1 {
			t.Fatalf("%d webhooks, want 1", len(c.Webhooks))
		}
		h := c.Webhooks[0]
		w = webhookSpec{"validating", c.Annotations, h.Name, h.ClientConfig, h.FailurePolicy, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, notIn(h.NamespaceSelector), h.Rules}
	}
	return w
}

func TestChart(t *testing.T) {
	helm(t)
	tests := []struct {
		name          string
		sets          []string
		kind, path    string
		failurePolicy string
		excluded      []string
		certManager   bool
		serve         bool
		serveTLS      bool
		noQueue       bool   // webhook.queue.enabled=false
		queuePolicy   string // Ignore unless set
		timeout       int32  // 3 unless set
	}{
		// The user.info webhook fails closed: skipped, it would let anyone
		// who may create pods claim any identity. Its own namespace stays
		// out, so its pods can always be recreated.
		{name: "defaults", kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}},
		{name: "cert-manager", sets: []string{"certificates.provider=cert-manager"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, certManager: true},
		// kube-system, which YuniKorn bypasses, is checked when the
		// operator lists no bypassed namespace.
		{name: "no bypassed namespace", sets: []string{"webhook.bypassedNamespaces=null"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace}},
		// Installed whole: in force when Helm applies it.
		{name: "registered by Helm", sets: []string{"webhook.registration=helm"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}},
		{name: "registered by Helm, cert-manager", sets: []string{"webhook.registration=helm", "certificates.provider=cert-manager"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, certManager: true},
		{name: "validating, kube-system left out", sets: []string{"webhook.type=validating", "webhook.exemptNamespaces={kube-system}"}, kind: "validating", path: "/validate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}},
		// Gatekeeper's name for the list, and the chart's former one,
		// still honoured: both lists are left out, each name once.
		{name: "exemptNamespaces and the former excludeNamespaces", sets: []string{"webhook.exemptNamespaces={kube-system,team-ops}", "webhook.excludeNamespaces={kube-system,legacy}"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system", "team-ops", "legacy"}},
		{name: "the former excludeNamespaces alone", sets: []string{"webhook.excludeNamespaces={kube-system}"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}},
		{name: "Ignore, as YuniKorn", sets: []string{"webhook.failurePolicy=Ignore"}, kind: "mutating", path: "/mutate", failurePolicy: "Ignore", excluded: []string{namespace, "kube-system"}},
		{name: "queue check failing closed, a longer timeout", sets: []string{"webhook.queue.failurePolicy=Fail", "webhook.timeoutSeconds=7"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, queuePolicy: "Fail", timeout: 7},
		{name: "serve enabled", sets: []string{"serve.enabled=true"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, serve: true},
		{name: "serve over TLS", sets: []string{"serve.enabled=true", "serve.tls.enabled=true"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, serve: true, serveTLS: true},
		{name: "serve over TLS, cert-manager", sets: []string{"serve.enabled=true", "serve.tls.enabled=true", "certificates.provider=cert-manager"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, serve: true, serveTLS: true, certManager: true},
		{name: "no placement check", sets: []string{"webhook.queue.enabled=false"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, noQueue: true},
		{name: "from the cluster, with serve", sets: []string{"yunikorn.fromCluster=true", "serve.enabled=true"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, serve: true},
		{name: "mounted copies of the ConfigMaps, with serve", sets: []string{"yunikorn.fromCluster=false", "serve.enabled=true"}, kind: "mutating", path: "/mutate", failurePolicy: "Fail", excluded: []string{namespace, "kube-system"}, serve: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.sets...)
			w := r.theWebhook(t)
			if w.kind != tt.kind {
				t.Errorf("webhook kind %s, want %s", w.kind, tt.kind)
			}
			svc := w.client.Service
			if svc == nil || svc.Name != webhookService || svc.Namespace != namespace || svc.Path == nil || *svc.Path != tt.path || svc.Port == nil || *svc.Port != 443 {
				t.Errorf("clientConfig.service %+v: want %s/%s port 443 path %s", svc, namespace, webhookService, tt.path)
			}
			if w.failurePolicy == nil || string(*w.failurePolicy) != tt.failurePolicy {
				t.Errorf("failurePolicy %v, want %s", deref(w.failurePolicy), tt.failurePolicy)
			}
			if w.sideEffects == nil || *w.sideEffects != admissionregistrationv1.SideEffectClassNone {
				t.Errorf("sideEffects %v, want None", deref(w.sideEffects))
			}
			timeout := cmp.Or(tt.timeout, 3)
			if w.timeoutSeconds == nil || *w.timeoutSeconds != timeout {
				t.Errorf("timeoutSeconds %v, want %d", deref(w.timeoutSeconds), timeout)
			}
			if !slices.Equal(w.reviewVersions, []string{"v1"}) {
				t.Errorf("admissionReviewVersions %v, want [v1]", w.reviewVersions)
			}
			if !slices.Equal(w.namespaceSelector, tt.excluded) {
				t.Errorf("namespaceSelector leaves out %v, want %v", w.namespaceSelector, tt.excluded)
			}
			if len(w.rules) == 0 || !slices.Contains(w.rules[0].Resources, "pods") {
				t.Errorf("rules %+v: want pods and workloads", w.rules)
			}
			if _, ok := r.services[webhookService]; !ok {
				t.Errorf("no Service %s for the webhook", webhookService)
			}

			dep := r.deployments[webhookService]
			if dep == nil {
				t.Fatalf("no Deployment %s", webhookService)
			}
			checkPod(t, dep, "webhook")
			checkProbes(t, dep)
			checkDeadline(t, dep, w)
			checkServiceSelects(t, r.services[webhookService], dep)
			checkPDB(t, r, dep)
			checkRBAC(t, r, dep)
			tlsSecret := volumeSecret(t, dep, "tls")

			if tt.certManager {
				cert := r.certificates[webhookService]
				if cert == nil {
					t.Fatalf("no Certificate %s", webhookService)
				}
				if want := namespace + "/" + cert.Metadata.Name; w.annotations["cert-manager.io/inject-ca-from"] != want {
					t.Errorf("cert-manager.io/inject-ca-from %q, want %q", w.annotations["cert-manager.io/inject-ca-from"], want)
				}
				if len(w.client.CABundle) != 0 {
					t.Error("caBundle set: cert-manager's injector owns it")
				}
				// Registered by the pods, the webhooks get the CA from
				// cert-manager's Secret at once, not when the injector
				// next runs.
				if args := dep.Spec.Template.Spec.Containers[0].Args; len(r.empty) > 0 && !slices.Contains(args, "--register-ca-file=/etc/aclc/tls/ca.crt") {
					t.Errorf("webhook args %v: registering under cert-manager without --register-ca-file", args)
				}
				if cert.Spec.SecretName != tlsSecret {
					t.Errorf("Certificate writes Secret %q, the pod mounts %q", cert.Spec.SecretName, tlsSecret)
				}
				for _, n := range []string{webhookService + "." + namespace + ".svc", webhookService + "." + namespace + ".svc.cluster.local"} {
					if !slices.Contains(cert.Spec.DNSNames, n) {
						t.Errorf("Certificate dnsNames %v lack %s", cert.Spec.DNSNames, n)
					}
				}
				if ref := cert.Spec.IssuerRef; ref.Kind == "Issuer" && r.issuers[ref.Name] == nil {
					t.Errorf("Certificate's Issuer %q is not rendered", ref.Name)
				}
				if len(r.secrets) != 0 {
					t.Errorf("Secrets %v rendered: cert-manager writes the TLS Secret", keys(r.secrets))
				}
			} else {
				if _, ok := w.annotations["cert-manager.io/inject-ca-from"]; ok {
					t.Error("cert-manager.io/inject-ca-from without cert-manager")
				}
				checkGeneratedCertificate(t, w.client.CABundle, r.secrets[tlsSecret])
			}

			checkQueueWebhook(t, r, w, !tt.noQueue, cmp.Or(tt.queuePolicy, "Ignore"))

			serve := r.deployments["aclc-serve"]
			if tt.serve {
				if serve == nil || r.services["aclc-serve"] == nil {
					t.Fatal("serve.enabled: no aclc-serve Deployment and Service")
				}
				checkPod(t, serve, "serve")
				checkServiceSelects(t, r.services["aclc-serve"], serve)
				checkServeNetworkPolicy(t, r.networkPolicies["aclc-serve"], serve)
				checkServeTLS(t, r, serve, tt.serveTLS, tt.certManager)
			} else if serve != nil {
				t.Error("aclc-serve rendered with serve.enabled false")
			}
		})
	}
}

// checkQueueWebhook checks the placement check's configuration: present
// when enabled, at /validate-queue of the same Service, with its own
// failurePolicy (Ignore by default: YuniKorn refuses the application
// itself) and the user.info webhook's timeout, namespaces, rules and CA.
func checkQueueWebhook(t *testing.T, r *rendered, w webhookSpec, enabled bool, policy string) {
	t.Helper()
	c, ok := r.validating[queueConfiguration]
	if !enabled {
		if ok {
			t.Errorf("%s rendered with webhook.queue.enabled false", queueConfiguration)
		}
		return
	}
	if !ok || len(c.Webhooks) != 1 {
		t.Fatalf("no %s with one webhook: %v", queueConfiguration, keys(r.validating))
	}
	h := c.Webhooks[0]
	svc := h.ClientConfig.Service
	if svc == nil || svc.Name != webhookService || svc.Namespace != namespace || svc.Path == nil || *svc.Path != "/validate-queue" || svc.Port == nil || *svc.Port != 443 {
		t.Errorf("queue clientConfig.service %+v: want %s/%s port 443 path /validate-queue", svc, namespace, webhookService)
	}
	if !strings.HasPrefix(h.Name, "validate-queue.") {
		t.Errorf("queue webhook name %s", h.Name)
	}
	if h.FailurePolicy == nil || string(*h.FailurePolicy) != policy {
		t.Errorf("queue webhook failurePolicy %v, want %s", deref(h.FailurePolicy), policy)
	}
	if deref(h.TimeoutSeconds) != deref(w.timeoutSeconds) || deref(h.SideEffects) != deref(w.sideEffects) {
		t.Errorf("queue webhook timeout %v side effects %v, differ from the user.info webhook's", deref(h.TimeoutSeconds), deref(h.SideEffects))
	}
	if !bytes.Equal(h.ClientConfig.CABundle, w.client.CABundle) || c.Annotations["cert-manager.io/inject-ca-from"] != w.annotations["cert-manager.io/inject-ca-from"] {
		t.Error("queue webhook's CA differs from the user.info webhook's")
	}
	var excluded []string
	if h.NamespaceSelector != nil {
		for _, e := range h.NamespaceSelector.MatchExpressions {
			if e.Key == "kubernetes.io/metadata.name" && e.Operator == "NotIn" {
				excluded = e.Values
			}
		}
	}
	if !slices.Equal(excluded, w.namespaceSelector) {
		t.Errorf("queue namespaceSelector leaves out %v, want %v", excluded, w.namespaceSelector)
	}
	if fmt.Sprint(h.Rules) != fmt.Sprint(w.rules) {
		t.Errorf("queue rules %+v, want %+v", h.Rules, w.rules)
	}
}

// Values that would install something that cannot work, or that the
// chart does not have, are refused at render time, naming the value.
func TestChartRefuses(t *testing.T) {
	helm(t)
	tests := []struct {
		set, want string
	}{
		{"webhook.type=both", "webhook.type"},
		{"webhook.failurePolicy=Retry", "webhook.failurePolicy"},
		{"webhook.queue.failurePolicy=Retry", "webhook.queue.failurePolicy"},
		{"serve.enabled=true,serve.networkPolicy.clientLabels=null", "clientLabels"},
		{"webhook.timeoutSeconds=31", "webhook.timeoutSeconds"},
		{"certificates.provider=vault", "certificates.provider"},
		// aclc --from-cluster reads the names YuniKorn reads.
		{"yunikorn.fromCluster=true,yunikorn.configsConfigMap=mine", "yunikorn.fromCluster"},
		// A misspelt key would otherwise be ignored silently.
		{"webhook.failurepolicy=Fail", "failurepolicy"},
		{"webhook.queue.enabled=yes", "webhook.queue.enabled"},
		// The selectors are the chart's: a value that set them would
		// write a key twice or take the pods out of their Deployment.
		{"commonLabels.app\\.kubernetes\\.io/instance=x", "commonLabels: app.kubernetes.io/instance"},
		{"commonLabels.helm\\.sh/chart=x", "commonLabels: helm.sh/chart"},
		{"podLabels.app\\.kubernetes\\.io/component=x", "podLabels: app.kubernetes.io/component"},
		{"webhook.podLabels.app\\.kubernetes\\.io/name=x", "webhook.podLabels: app.kubernetes.io/name"},
		{"serve.podLabels.app\\.kubernetes\\.io/name=x", "serve.podLabels: app.kubernetes.io/name"},
		{"extraVolumeMounts[0].name=ca", "missing property 'mountPath'"},
		{"extraEnv[0].value=x", "missing property 'name'"},
		// The metrics need a port apart from the webhook's HTTPS.
		{"webhook.metrics.port=8443", "webhook.metrics.port 8443 is webhook.port"},
		{"serviceMonitor.enabled=true,webhook.metrics.enabled=false", "serviceMonitor.enabled"},
		{"serviceMonitor.interval=often", "serviceMonitor.interval"},
		{"serviceMonitor.enabeld=true", "enabeld"},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			_, err := helmTemplate(t, tt.set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func keys[T any](m map[string]T) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// checkPod checks the restricted security context and that every path the
// container's arguments name lies in a volume it mounts, from a volume the
// pod has, with YuniKorn's ConfigMaps optional.
func checkPod(t *testing.T, dep *appsv1.Deployment, container string) {
	t.Helper()
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Name != container {
		t.Fatalf("%s: containers %v, want one named %s", dep.Name, pod.Containers, container)
	}
	c := pod.Containers[0]
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext %+v: want runAsNonRoot and seccomp RuntimeDefault", dep.Name, psc)
	}
	if psc != nil && (psc.RunAsUser == nil || *psc.RunAsUser == 0) {
		t.Errorf("%s: runAsUser %v: want the image's non-root 65532", dep.Name, deref(psc.RunAsUser))
	}
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatalf("%s: no container securityContext", dep.Name)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Errorf("%s: readOnlyRootFilesystem not true", dep.Name)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("%s: allowPrivilegeEscalation not false", dep.Name)
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0:
		t.Errorf("%s: capabilities %+v, want drop [ALL] and nothing added", dep.Name, sc.Capabilities)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Errorf("%s: container runAsNonRoot not true", dep.Name)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: resources %+v: want cpu and memory requests and a memory limit", dep.Name, c.Resources)
	}
	checkGoMemLimit(t, dep.Name, c)
	if len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != container {
		t.Errorf("%s: command %v args %v: want the image's entrypoint with args [%s ...]", dep.Name, c.Command, c.Args, container)
	}

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("%s: mount %s of a volume the pod does not have", dep.Name, m.Name)
		}
		mounts[m.MountPath] = m
	}
	// mountOf is the mount a path lies in: a mount point or below one.
	mountOf := func(p string) (corev1.VolumeMount, bool) {
		for dir := path.Clean(p); dir != "/"; dir = path.Dir(dir) {
			if m, ok := mounts[dir]; ok {
				return m, true
			}
		}
		return corev1.VolumeMount{}, false
	}
	var sources []string
	for _, a := range c.Args {
		p := a
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			p = v
		}
		if !strings.HasPrefix(p, "/") {
			continue
		}
		m, ok := mountOf(p)
		if !ok {
			t.Errorf("%s: argument %q names %s, which no volume mounts (the root file system is read-only and empty)", dep.Name, a, p)
			continue
		}
		if !strings.HasPrefix(a, "--") {
			sources = append(sources, p)
			v := volumes[m.Name]
			if v.ConfigMap == nil || v.ConfigMap.Optional == nil || !*v.ConfigMap.Optional {
				t.Errorf("%s: source %s is on volume %s: want an optional ConfigMap volume", dep.Name, p, m.Name)
			}
			if !m.ReadOnly {
				t.Errorf("%s: source mount %s is writable", dep.Name, m.MountPath)
			}
		}
	}
	// aclc tells YuniKorn's two ConfigMaps apart by their directory
	// names, and flattens configs over defaults in that order.
	want := []string{"/etc/aclc/yunikorn-defaults", "/etc/aclc/yunikorn-configs"}
	if slices.Contains(c.Args, "--from-cluster") {
		// Read from the API server in YuniKorn's namespace, with the
		// ServiceAccount's token, and nothing mounted for it.
		want = nil
		if !slices.Contains(c.Args, "--namespace="+yunikornNamespace) {
			t.Errorf("%s: args %v: want --namespace=%s with --from-cluster", dep.Name, c.Args, yunikornNamespace)
		}
		if pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
			t.Errorf("%s: --from-cluster without the ServiceAccount token", dep.Name)
		}
		for _, v := range pod.Volumes {
			if v.ConfigMap != nil {
				t.Errorf("%s: --from-cluster and ConfigMap volume %s", dep.Name, v.Name)
			}
		}
	}
	if !slices.Equal(sources, want) {
		t.Errorf("%s: sources %v, want %v", dep.Name, sources, want)
	}
	for _, s := range sources {
		m, _ := mountOf(s)
		v := volumes[m.Name]
		if base := path.Base(s); v.ConfigMap != nil && v.ConfigMap.Name != base {
			t.Errorf("%s: directory %s holds ConfigMap %s: aclc reads the directory's name as the ConfigMap's", dep.Name, s, v.ConfigMap.Name)
		}
	}
}

func checkProbes(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	c := dep.Spec.Template.Spec.Containers[0]
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTPS GET of %s", p.name, p.path)
			continue
		}
		g := p.probe.HTTPGet
		if g.Path != p.path || g.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe %s %s, want HTTPS %s", p.name, g.Scheme, g.Path, p.path)
		}
		if !containerHasPort(c, g.Port.String()) {
			t.Errorf("%s probe port %s is not a container port", p.name, g.Port.String())
		}
	}
}

func containerHasPort(c corev1.Container, port string) bool {
	for _, p := range c.Ports {
		if p.Name == port || fmt.Sprint(p.ContainerPort) == port {
			return true
		}
	}
	return false
}

func checkServiceSelects(t *testing.T, svc *corev1.Service, dep *appsv1.Deployment) {
	t.Helper()
	if svc == nil {
		t.Fatalf("no Service for %s", dep.Name)
	}
	labels := dep.Spec.Template.Labels
	for k, v := range svc.Spec.Selector {
		if labels[k] != v {
			t.Errorf("Service %s selects %s=%s, the pods of %s have %q", svc.Name, k, v, dep.Name, labels[k])
		}
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("Deployment %s selects %s=%s, its pods have %q", dep.Name, k, v, labels[k])
		}
	}
	for _, p := range svc.Spec.Ports {
		if !containerHasPort(dep.Spec.Template.Spec.Containers[0], p.TargetPort.String()) {
			t.Errorf("Service %s targets port %s, not a port of %s", svc.Name, p.TargetPort.String(), dep.Name)
		}
	}
}

func checkPDB(t *testing.T, r *rendered, dep *appsv1.Deployment) {
	t.Helper()
	pdb := r.pdbs[dep.Name]
	if pdb == nil {
		t.Fatalf("no PodDisruptionBudget for %s", dep.Name)
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("PodDisruptionBudget selects %s=%s, not the webhook's pods", k, v)
		}
	}
	if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
		t.Error("PodDisruptionBudget without maxUnavailable or minAvailable")
	}
}

// checkRBAC: the pods' ServiceAccount may read YuniKorn's two ConfigMaps
// and Namespaces, and nothing more.
func checkRBAC(t *testing.T, r *rendered, dep *appsv1.Deployment) {
	t.Helper()
	sa := dep.Spec.Template.Spec.ServiceAccountName
	if r.serviceAccounts[sa] == nil {
		t.Fatalf("ServiceAccount %q is not rendered", sa)
	}
	bound := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == namespace {
				return true
			}
		}
		return false
	}
	var cms []string
	registers := len(r.empty) > 0
	for _, rb := range r.roleBindings {
		if role := r.roles[rb.RoleRef.Name]; role != nil && bound(rb.Subjects) && role.Name == registration {
			// webhook.registration=pod: the registration ConfigMap, by
			// name, and the Service's EndpointSlices, in the release's
			// namespace; read-only.
			if !registers {
				t.Errorf("Role %s rendered without webhook configurations to register", role.Name)
			}
			if role.Namespace != namespace || rb.Namespace != namespace {
				t.Errorf("Role %s in %q bound in %q: want both in the release namespace %q", role.Name, role.Namespace, rb.Namespace, namespace)
			}
			for _, rule := range role.Rules {
				switch {
				case slices.Equal(rule.Resources, []string{"configmaps"}) && slices.Equal(rule.Verbs, []string{"get"}) && slices.Equal(rule.ResourceNames, []string{registration}):
				case slices.Equal(rule.APIGroups, []string{"discovery.k8s.io"}) && slices.Equal(rule.Resources, []string{"endpointslices"}) && slices.Equal(rule.Verbs, []string{"list"}):
				default:
					t.Errorf("Role %s grants %v on %v %v", role.Name, rule.Verbs, rule.Resources, rule.ResourceNames)
				}
			}
			continue
		}
		if role := r.roles[rb.RoleRef.Name]; role != nil && bound(rb.Subjects) {
			// The ConfigMaps are YuniKorn's, in its namespace; a Role in
			// the release's would grant nothing that is there.
			if role.Namespace != yunikornNamespace || rb.Namespace != yunikornNamespace {
				t.Errorf("Role %s in %q bound in %q: want both in YuniKorn's namespace %q", role.Name, role.Namespace, rb.Namespace, yunikornNamespace)
			}
			for _, rule := range role.Rules {
				// --from-cluster lists and watches each by field selector.
				if slices.Contains(rule.Resources, "configmaps") && slices.Contains(rule.Verbs, "get") &&
					slices.Contains(rule.Verbs, "list") && slices.Contains(rule.Verbs, "watch") {
					cms = append(cms, rule.ResourceNames...)
				}
				for _, v := range rule.Verbs {
					if !slices.Contains([]string{"get", "list", "watch"}, v) {
						t.Errorf("Role %s grants %s", role.Name, v)
					}
				}
			}
		}
	}
	slices.Sort(cms)
	if !slices.Equal(cms, []string{"yunikorn-configs", "yunikorn-defaults"}) {
		t.Errorf("ServiceAccount %s may read ConfigMaps %v, want exactly yunikorn-configs and yunikorn-defaults", sa, cms)
	}
	namespaces := false
	updates := map[string]string{} // configuration name -> resource
	for _, b := range r.clusterRoleBinds {
		if cr := r.clusterRoles[b.RoleRef.Name]; cr != nil && bound(b.Subjects) {
			for _, rule := range cr.Rules {
				if slices.Equal(rule.APIGroups, []string{"admissionregistration.k8s.io"}) && len(rule.Resources) == 1 &&
					slices.Equal(rule.Verbs, []string{"get", "update"}) && len(rule.ResourceNames) > 0 {
					// Never create, delete, list or another's name.
					for _, n := range rule.ResourceNames {
						updates[n] = rule.Resources[0]
					}
					continue
				}
				if slices.Equal(rule.Resources, []string{"namespaces"}) && slices.Contains(rule.Verbs, "get") &&
					slices.Contains(rule.Verbs, "list") && slices.Contains(rule.Verbs, "watch") {
					namespaces = true
				} else {
					t.Errorf("ClusterRole %s grants %v on %v", cr.Name, rule.Verbs, rule.Resources)
				}
			}
		}
	}
	if !namespaces {
		t.Errorf("ServiceAccount %s may not read Namespaces", sa)
	}
	want := map[string]string{}
	for name, kind := range r.empty {
		want[name] = strings.ToLower(kind) + "s"
	}
	if !maps.Equal(updates, want) {
		t.Errorf("ServiceAccount %s may update the webhook configurations %v, want exactly the ones rendered empty %v", sa, updates, want)
	}
	// The pods register what the ConfigMap holds, and nothing is rendered
	// empty that the ConfigMap does not fill.
	args := dep.Spec.Template.Spec.Containers[0].Args
	if got := slices.Contains(args, "--register="+registration); got != registers {
		t.Errorf("--register=%s in the webhook's args: %v, want %v", registration, got, registers)
	}
	for name := range r.empty {
		if r.mutating[name] == nil && r.validating[name] == nil {
			t.Errorf("%s is rendered empty and ConfigMap %s does not hold its webhooks", name, registration)
		}
	}
	if registers && !*dep.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Error("webhook.registration=pod without the ServiceAccount token the pods register with")
	}
}

// registration is the ConfigMap of the webhooks the pods put in force.
const registration = release + "-webhook-registration"

func volumeSecret(t *testing.T, dep *appsv1.Deployment, name string) string {
	t.Helper()
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == name && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	t.Fatalf("%s: no Secret volume %s", dep.Name, name)
	return ""
}

// checkGeneratedCertificate: the chart's Secret holds a serving
// certificate for the Service's DNS names, signed by the CA in caBundle,
// as the API server will check it.
func checkGeneratedCertificate(t *testing.T, caBundle []byte, secret *corev1.Secret) {
	t.Helper()
	if secret == nil {
		t.Fatal("no TLS Secret rendered")
	}
	if secret.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret type %s, want %s", secret.Type, corev1.SecretTypeTLS)
	}
	pool := x509.NewCertPool()
	if len(caBundle) == 0 || !pool.AppendCertsFromPEM(caBundle) {
		t.Fatalf("caBundle holds no PEM certificate: %q", caBundle)
	}
	if !bytes.Equal(caBundle, secret.Data["ca.crt"]) {
		t.Error("caBundle differs from the Secret's ca.crt")
	}
	block, _ := pem.Decode(secret.Data["tls.crt"])
	if block == nil {
		t.Fatal("tls.crt holds no PEM")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(secret.Data["tls.key"]) == 0 {
		t.Error("no tls.key")
	}
	for _, name := range []string{webhookService + "." + namespace + ".svc", webhookService + "." + namespace + ".svc.cluster.local"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
}

// checkDeadline: the webhook is started with the timeoutSeconds of its
// configurations, so that it answers every review, denied if need be,
// before the API server gives up and failurePolicy decides instead.
func checkDeadline(t *testing.T, dep *appsv1.Deployment, w webhookSpec) {
	t.Helper()
	var args []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--timeout-seconds="); ok {
			args = append(args, v)
		}
	}
	if len(args) != 1 {
		t.Fatalf("%s: --timeout-seconds given %d times, want once", dep.Name, len(args))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || w.timeoutSeconds == nil || int32(n) != *w.timeoutSeconds {
		t.Errorf("%s runs with --timeout-seconds=%s, the API server waits %v s", dep.Name, args[0], deref(w.timeoutSeconds))
	}
}

// checkServeNetworkPolicy: only pods with the client labels reach serve's
// pods, on serve's port.
func checkServeNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, dep *appsv1.Deployment) {
	t.Helper()
	if np == nil {
		t.Fatal("serve enabled without a NetworkPolicy")
	}
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("NetworkPolicy selects %s=%s, not serve's pods", k, v)
		}
	}
	if len(np.Spec.PodSelector.MatchLabels) == 0 || !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("NetworkPolicy selects %v for %v, want serve's pods for Ingress", np.Spec.PodSelector.MatchLabels, np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 {
		t.Fatalf("NetworkPolicy ingress %+v, want one rule from the clients", np.Spec.Ingress)
	}
	in := np.Spec.Ingress[0]
	from := in.From[0].PodSelector
	if from == nil || from.MatchLabels["aclc.dev/serve-client"] != "true" || len(from.MatchLabels) != 1 {
		t.Errorf("NetworkPolicy admits pods %v, want aclc.dev/serve-client=true", from)
	}
	if len(in.Ports) != 1 || in.Ports[0].Port == nil || !containerHasPort(dep.Spec.Template.Spec.Containers[0], in.Ports[0].Port.String()) {
		t.Errorf("NetworkPolicy ports %+v, want serve's container port", in.Ports)
	}
}

// checkServeTLS: with serve.tls.enabled serve is started with a certificate
// and key from a Secret it mounts (checkPod checks the paths), made by the
// chart's certificate provider, and probed over HTTPS; without, plain HTTP.
func checkServeTLS(t *testing.T, r *rendered, dep *appsv1.Deployment, enabled, certManager bool) {
	t.Helper()
	c := dep.Spec.Template.Spec.Containers[0]
	hasCert := slices.Contains(c.Args, "--tls-cert=/etc/aclc/tls/tls.crt") && slices.Contains(c.Args, "--tls-key=/etc/aclc/tls/tls.key")
	scheme := corev1.URISchemeHTTP
	if enabled {
		scheme = corev1.URISchemeHTTPS
	}
	if hasCert != enabled {
		t.Errorf("serve args %v: TLS files given %v, want %v", c.Args, hasCert, enabled)
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Scheme != scheme && !(scheme == corev1.URISchemeHTTP && p.HTTPGet.Scheme == "") {
			t.Errorf("serve probe %+v, want %s", p, scheme)
		}
	}
	if !enabled {
		return
	}
	secret := volumeSecret(t, dep, "tls")
	if certManager {
		cert := r.certificates["aclc-serve"]
		if cert == nil || cert.Spec.SecretName != secret || !slices.Contains(cert.Spec.DNSNames, "aclc-serve."+namespace+".svc") {
			t.Errorf("serve's Certificate %+v: want Secret %s for aclc-serve's DNS names", cert, secret)
		}
		return
	}
	s := r.secrets[secret]
	if s == nil {
		t.Fatalf("serve's TLS Secret %s is not rendered", secret)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data["ca.crt"]) {
		t.Fatal("serve's Secret has no ca.crt for clients")
	}
	block, _ := pem.Decode(s.Data["tls.crt"])
	if block == nil {
		t.Fatal("serve's tls.crt holds no PEM")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "aclc-serve." + namespace + ".svc", Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("serve's certificate: %v", err)
	}
}

// checkGoMemLimit: GOMEMLIMIT is 90% of the container's memory limit, in
// bytes, and absent when there is no limit.
func checkGoMemLimit(t *testing.T, name string, c corev1.Container) {
	t.Helper()
	var env []corev1.EnvVar
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			env = append(env, e)
		}
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		if len(env) != 0 {
			t.Errorf("%s: GOMEMLIMIT %v without a memory limit", name, env)
		}
		return
	}
	if len(env) != 1 {
		t.Fatalf("%s: GOMEMLIMIT %v: want one, from limits.memory %s", name, env, limit.String())
	}
	got, err := strconv.ParseInt(env[0].Value, 10, 64)
	want := limit.Value() * 9 / 10
	if err != nil || got < want-1 || got > want+1 {
		t.Errorf("%s: GOMEMLIMIT %q (%v): want %d, 90%% of limits.memory %s", name, env[0].Value, err, want, limit.String())
	}
}

// TestChartGoMemLimit: the Go runtime of both containers gets a soft
// memory limit below the container's, so it collects harder before the
// kernel kills it; without a limit, none, which is Go's default.
func TestChartGoMemLimit(t *testing.T) {
	helm(t)
	tests := []struct {
		name string
		sets []string
		want string // "" when GOMEMLIMIT must be absent
	}{
		{"serve's default 256Mi", []string{"webhook.resources.limits.memory=256Mi"}, "241591910"},
		{"a binary suffix with a fraction", []string{"webhook.resources.limits.memory=1.5Gi", "serve.resources.limits.memory=1.5Gi"}, "1449551462"},
		{"a decimal suffix", []string{"webhook.resources.limits.memory=500M", "serve.resources.limits.memory=500M"}, "450000000"},
		{"bytes", []string{"webhook.resources.limits.memory=1000000", "serve.resources.limits.memory=1000000"}, "900000"},
		{"no limit, no GOMEMLIMIT", []string{"webhook.resources.limits=null", "serve.resources.limits=null"}, ""},
	}
	// The webhook's default 512Mi (docs/RELIABILITY.md: what a 5,000-queue
	// configuration under load takes with the default 2 threads).
	for _, e := range render(t).deployments[webhookService].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GOMEMLIMIT" && e.Value != "483183820" {
			t.Errorf("the webhook's default GOMEMLIMIT %q, want 483183820 (90%% of 512Mi)", e.Value)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, append(tt.sets, "serve.enabled=true")...)
			for _, name := range []string{webhookService, "aclc-serve"} {
				dep := r.deployments[name]
				if dep == nil {
					t.Fatalf("no Deployment %s", name)
				}
				c := dep.Spec.Template.Spec.Containers[0]
				got := ""
				for _, e := range c.Env {
					if e.Name == "GOMEMLIMIT" {
						got = e.Value
					}
				}
				if got != tt.want {
					t.Errorf("%s: GOMEMLIMIT %q, want %q", name, got, tt.want)
				}
				checkGoMemLimit(t, name, c)
			}
		})
	}
	_, err := helmTemplate(t, "webhook.resources.limits.memory=1e9")
	if err == nil || !strings.Contains(err.Error(), `resources.limits.memory "1e9"`) {
		t.Errorf("a limit GOMEMLIMIT cannot be computed from: %v", err)
	}
}

// TestChartRefusesYuniKornsNamespace: the webhooks leave the release
// namespace out, so that aclc's own pods can always be recreated. In
// YuniKorn's namespace that would leave a namespace where anyone who may
// create pods sets user.info unchecked, and can run a pod with the webhook
// Service's labels or mounting its TLS Secret. A values schema cannot see
// the release namespace, so the templates refuse it.
func TestChartRefusesYuniKornsNamespace(t *testing.T) {
	helm(t)
	for _, tt := range []struct {
		ns   string
		sets []string
	}{
		{yunikornNamespace, nil},
		{yunikornNamespace, []string{"yunikorn.fromCluster=false"}},
		{"team-a", []string{"yunikorn.namespace=team-a"}},
	} {
		_, err := helmTemplateIn(t, tt.ns, tt.sets...)
		want := fmt.Sprintf("release namespace %q is YuniKorn's (yunikorn.namespace): install aclc in a namespace of its own", tt.ns)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("release in %s, %v: %v; want %q", tt.ns, tt.sets, err, want)
		}
	}
	// YuniKorn elsewhere: the release may use the name, and aclc reads
	// YuniKorn's namespace.
	out, err := helmTemplateIn(t, "yunikorn", "yunikorn.namespace=yunikorn-prod")
	if err != nil {
		t.Fatal(err)
	}
	r := decodeAll(t, out)
	if dep := r.deployments[webhookService]; dep == nil || !slices.Contains(dep.Spec.Template.Spec.Containers[0].Args, "--namespace=yunikorn-prod") {
		t.Errorf("yunikorn.namespace=yunikorn-prod: webhook does not read it: %+v", dep)
	}
}

// TestChartMetrics: the webhook serves /metrics in plain HTTP on a port of
// its own (--metrics-addr), named metrics in the pod and the Service, and
// a ServiceMonitor scrapes it when asked for, and only then.
func TestChartMetrics(t *testing.T) {
	helm(t)
	tests := []struct {
		name           string
		sets           []string
		port           int32 // 0: no metrics port
		serviceMonitor bool
		interval       string
		scrapeTimeout  string
		labels         map[string]string
	}{
		{name: "defaults: a metrics port, no ServiceMonitor", port: 9090},
		{name: "another port", sets: []string{"webhook.metrics.port=8888"}, port: 8888},
		{name: "no metrics port", sets: []string{"webhook.metrics.enabled=false"}},
		{name: "a ServiceMonitor", sets: []string{"serviceMonitor.enabled=true"}, port: 9090, serviceMonitor: true, interval: "30s"},
		{name: "a ServiceMonitor with labels and its own interval", sets: []string{"serviceMonitor.enabled=true", "serviceMonitor.interval=15s", "serviceMonitor.scrapeTimeout=5s", "serviceMonitor.labels.release=prometheus"},
			port: 9090, serviceMonitor: true, interval: "15s", scrapeTimeout: "5s", labels: map[string]string{"release": "prometheus"}},
		{name: "a ServiceMonitor with Prometheus's own interval", sets: []string{"serviceMonitor.enabled=true", "serviceMonitor.interval="}, port: 9090, serviceMonitor: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.sets...)
			dep := r.deployments[webhookService]
			svc := r.services[webhookService]
			if dep == nil || svc == nil {
				t.Fatalf("no Deployment and Service %s", webhookService)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			var args []string
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--metrics-addr") {
					args = append(args, a)
				}
			}
			var containerPort *corev1.ContainerPort
			for i, p := range c.Ports {
				if p.Name == "metrics" {
					containerPort = &c.Ports[i]
				}
			}
			var servicePort *corev1.ServicePort
			for i, p := range svc.Spec.Ports {
				if p.Name == "metrics" {
					servicePort = &svc.Spec.Ports[i]
				}
			}
			if tt.port == 0 {
				if len(args) != 0 || containerPort != nil || servicePort != nil {
					t.Errorf("metrics disabled: args %v, container port %+v, Service port %+v", args, containerPort, servicePort)
				}
			} else {
				if want := fmt.Sprintf("--metrics-addr=:%d", tt.port); !slices.Equal(args, []string{want}) {
					t.Errorf("args %v, want %s once", args, want)
				}
				if containerPort == nil || containerPort.ContainerPort != tt.port || containerPort.Protocol != corev1.ProtocolTCP {
					t.Errorf("container port metrics %+v, want %d/TCP", containerPort, tt.port)
				}
				if servicePort == nil || servicePort.Port != tt.port || servicePort.TargetPort.String() != "metrics" {
					t.Errorf("Service port metrics %+v, want %d to the container's metrics port", servicePort, tt.port)
				}
				// The probes and the API server stay on HTTPS.
				checkProbes(t, dep)
			}
			checkServiceSelects(t, svc, dep)

			sm := r.serviceMonitors[webhookService]
			if !tt.serviceMonitor {
				if len(r.serviceMonitors) != 0 {
					t.Errorf("ServiceMonitors %v rendered, want none", keys(r.serviceMonitors))
				}
				return
			}
			if sm == nil || len(r.serviceMonitors) != 1 {
				t.Fatalf("ServiceMonitors %v, want %s", keys(r.serviceMonitors), webhookService)
			}
			if sm.Metadata.Namespace != namespace || !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
				t.Errorf("ServiceMonitor in %q watching %v, want %s", sm.Metadata.Namespace, sm.Spec.NamespaceSelector.MatchNames, namespace)
			}
			// It selects the webhook's Service, and no other.
			sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			for name, s := range r.services {
				if got := sel.Matches(labels.Set(s.Labels)); got != (name == webhookService) {
					t.Errorf("ServiceMonitor selects Service %s: %v", name, got)
				}
			}
			if len(sm.Spec.Endpoints) != 1 {
				t.Fatalf("endpoints %+v, want one", sm.Spec.Endpoints)
			}
			e := sm.Spec.Endpoints[0]
			if e.Port != servicePort.Name || e.Path != "/metrics" || e.Scheme != "http" || e.Interval != tt.interval || e.ScrapeTimeout != tt.scrapeTimeout {
				t.Errorf("endpoint %+v, want port metrics, http /metrics, interval %q, scrapeTimeout %q", e, tt.interval, tt.scrapeTimeout)
			}
			for k, v := range tt.labels {
				if sm.Metadata.Labels[k] != v {
					t.Errorf("ServiceMonitor labels %v lack %s=%s", sm.Metadata.Labels, k, v)
				}
			}
		})
	}
}

// TestChartCommonValues: the values Gatekeeper's and kube-mgmt's charts
// have for every object and pod. commonLabels label every object and pod;
// podAnnotations and podLabels go on every pod, under the component's own;
// extraEnv, extraVolumes and extraVolumeMounts go into every container.
func TestChartCommonValues(t *testing.T) {
	helm(t)
	out, err := helmTemplate(t,
		"serve.enabled=true", "serve.tls.enabled=true", "serviceMonitor.enabled=true",
		"commonLabels.team=platform", "commonLabels.cost-center=c42",
		"podLabels.team=pods", "podLabels.tier=admission", "webhook.podLabels.tier=webhook",
		"podAnnotations.example\\.com/contact=ops", "podAnnotations.example\\.com/owner=platform", "serve.podAnnotations.example\\.com/owner=serve",
		"extraEnv[0].name=HTTPS_PROXY", "extraEnv[0].value=http://proxy:3128",
		"extraVolumes[0].name=corp-ca", "extraVolumes[0].secret.secretName=corp-ca",
		"extraVolumeMounts[0].name=corp-ca", "extraVolumeMounts[0].mountPath=/etc/corp-ca", "extraVolumeMounts[0].readOnly=true",
	)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeAll(t, out)
	if len(r.labels) < 15 {
		t.Fatalf("only %d objects rendered: %v", len(r.labels), r.labels)
	}
	for obj, l := range r.labels {
		if l["team"] != "platform" || l["cost-center"] != "c42" || l["app.kubernetes.io/instance"] != release {
			t.Errorf("%s labels %v: want commonLabels beside the chart's", obj, l)
		}
	}
	for _, tt := range []struct {
		name, container string
		labels          map[string]string
		annotations     map[string]string
	}{
		{webhookService, "webhook", map[string]string{"team": "pods", "tier": "webhook", "cost-center": "c42", "app.kubernetes.io/component": "webhook"},
			map[string]string{"example.com/contact": "ops", "example.com/owner": "platform"}},
		{"aclc-serve", "serve", map[string]string{"team": "pods", "tier": "admission", "cost-center": "c42", "app.kubernetes.io/component": "serve"},
			map[string]string{"example.com/contact": "ops", "example.com/owner": "serve"}},
	} {
		dep := r.deployments[tt.name]
		if dep == nil {
			t.Fatalf("no Deployment %s", tt.name)
		}
		pod := dep.Spec.Template
		for k, v := range tt.labels {
			if pod.Labels[k] != v {
				t.Errorf("%s pod label %s=%q, want %q (component over chart-wide over commonLabels)", tt.name, k, pod.Labels[k], v)
			}
		}
		for k, v := range tt.annotations {
			if pod.Annotations[k] != v {
				t.Errorf("%s pod annotation %s=%q, want %q", tt.name, k, pod.Annotations[k], v)
			}
		}
		c := pod.Spec.Containers[0]
		var proxy []string
		for _, e := range c.Env {
			if e.Name == "HTTPS_PROXY" {
				proxy = append(proxy, e.Value)
			}
		}
		if !slices.Equal(proxy, []string{"http://proxy:3128"}) {
			t.Errorf("%s env %+v, want HTTPS_PROXY from extraEnv once", tt.name, c.Env)
		}
		checkGoMemLimit(t, tt.name, c)
		var volume *corev1.Volume
		for i, v := range pod.Spec.Volumes {
			if v.Name == "corp-ca" {
				volume = &pod.Spec.Volumes[i]
			}
		}
		if volume == nil || volume.Secret == nil || volume.Secret.SecretName != "corp-ca" {
			t.Errorf("%s volumes %+v, want corp-ca from extraVolumes", tt.name, pod.Spec.Volumes)
		}
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "corp-ca" && m.MountPath == "/etc/corp-ca" && m.ReadOnly
		}) {
			t.Errorf("%s mounts %+v, want corp-ca at /etc/corp-ca from extraVolumeMounts", tt.name, c.VolumeMounts)
		}
		checkPod(t, dep, tt.container)
		checkServiceSelects(t, r.services[tt.name], dep)
	}

	// A GOMEMLIMIT of one's own replaces the computed one: one variable,
	// the value given.
	r = render(t, "serve.enabled=true", "extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=100MiB")
	for _, name := range []string{webhookService, "aclc-serve"} {
		var got []string
		for _, e := range r.deployments[name].Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOMEMLIMIT" {
				got = append(got, e.Value)
			}
		}
		if !slices.Equal(got, []string{"100MiB"}) {
			t.Errorf("%s: GOMEMLIMIT %v, want extraEnv's 100MiB alone", name, got)
		}
	}
}

// TestChartREADMECommands runs the chart README's helm commands verbatim,
// from the repository root, with the repository's helm, so that none of
// them fails for a reader: helm template and helm lint as written, and
// helm install, which needs a cluster, as helm template with the same
// arguments. helm template checks a chart's kubeVersion against a default
// version (v1.20 for a helm built without one), so a floor there refused
// the README's own command. The README's `aclc build` commands run first,
// in order, so that the files they write are there for helm's --set-file;
// everything runs in a directory of its own that links the repository's
// charts and examples, so nothing is written into the repository.
func TestChartREADMECommands(t *testing.T) {
	h := helm(t)
	work := t.TempDir()
	for _, d := range []string{"charts", "examples"} {
		abs, err := filepath.Abs(filepath.Join("..", d))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(work, d)); err != nil {
			t.Fatal(err)
		}
	}
	readme, err := os.ReadFile(path.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var commands, builds []string
	// Fenced lines, a trailing backslash continuing them, and `helm ...`
	// in the text.
	inFence := false
	var cont string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			line = cont + strings.TrimSpace(line)
			if c, ok := strings.CutSuffix(line, "\\"); ok {
				cont = c
				continue
			}
			cont = ""
			if strings.HasPrefix(line, "helm ") {
				commands = append(commands, line)
			}
			if strings.HasPrefix(line, "aclc build ") {
				builds = append(builds, line)
			}
			continue
		}
		for _, m := range regexp.MustCompile("`(helm [^`]+)`").FindAllStringSubmatch(line, -1) {
			if strings.Contains(m[1], " charts/aclc") {
				commands = append(commands, m[1])
			}
		}
	}
	if len(commands) < 3 {
		t.Fatalf("found %d helm commands in the README: %q", len(commands), commands)
	}
	for _, build := range builds {
		cmd := exec.Command(aclc(t), strings.Fields(build)[1:]...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", build, err, out)
		}
	}
	for _, command := range commands {
		t.Run(command, func(t *testing.T) {
			if strings.ContainsAny(command, "<>|$") {
				t.Fatalf("not a command to run verbatim: %q", command)
			}
			if c, _, ok := strings.Cut(command, "#"); ok {
				command = strings.TrimSpace(c)
			}
			args := strings.Fields(command)[1:]
			if args[0] == "install" || args[0] == "upgrade" {
				args[0] = "template"
			}
			cmd := exec.Command(h, args...)
			cmd.Dir = work
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		})
	}
}

// TestChartYuniKornVersion pins that yunikorn.version reaches every
// container that reads YuniKorn's configuration as --yunikorn-version, and
// that an empty value leaves aclc's default.
func TestChartYuniKornVersion(t *testing.T) {
	helm(t)
	for _, tt := range []struct {
		name string
		sets []string
		want string // "" : no --yunikorn-version
	}{
		{"an empty version leaves aclc's default", []string{"serve.enabled=true"}, ""},
		{"the version the cluster runs reaches webhook and serve", []string{"serve.enabled=true", "yunikorn.version=1.7.0"}, "--yunikorn-version=1.7.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.sets...)
			if len(r.deployments) < 2 {
				t.Fatalf("deployments %v: want webhook and serve", keys(r.deployments))
			}
			for name, dep := range r.deployments {
				args := dep.Spec.Template.Spec.Containers[0].Args
				var got string
				for _, a := range args {
					if strings.HasPrefix(a, "--yunikorn-version") {
						got = a
					}
				}
				if got != tt.want {
					t.Errorf("%s args %q: --yunikorn-version %q, want %q", name, args, got, tt.want)
				}
			}
		})
	}
	if _, err := helmTemplate(t, "yunikorn.version=1.4.0"); err == nil {
		t.Error("yunikorn.version=1.4.0 rendered: want the values schema to refuse a release aclc does not know")
	}
}

// The webhook's pods are scheduled ahead of ordinary workloads and spread
// across nodes by default, and their CPU limit bounds the webhook's
// threads (and its Wasm pool): one node, or a node with many cores, does
// not take every replica or all the memory. Both can be turned off.
func TestChartWebhookSchedulingDefaults(t *testing.T) {
	helm(t)
	spec := render(t).deployments[webhookService].Spec.Template.Spec
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("priorityClassName %q", spec.PriorityClassName)
	}
	if len(spec.TopologySpreadConstraints) != 1 {
		t.Fatalf("topologySpreadConstraints %+v", spec.TopologySpreadConstraints)
	}
	c := spec.TopologySpreadConstraints[0]
	if c.TopologyKey != "kubernetes.io/hostname" || c.MaxSkew != 1 || c.WhenUnsatisfiable != "ScheduleAnyway" || c.LabelSelector == nil ||
		c.LabelSelector.MatchLabels["app.kubernetes.io/component"] != "webhook" || c.LabelSelector.MatchLabels["app.kubernetes.io/instance"] == "" {
		t.Errorf("spread %+v", c)
	}
	if cpu := spec.Containers[0].Resources.Limits.Cpu(); cpu.String() != "2" {
		t.Errorf("CPU limit %s, want 2", cpu)
	}
	spec = render(t, "webhook.priorityClassName=", "webhook.spreadAcrossNodes=false").deployments[webhookService].Spec.Template.Spec
	if spec.PriorityClassName != "" || len(spec.TopologySpreadConstraints) != 0 {
		t.Errorf("turned off: %q %+v", spec.PriorityClassName, spec.TopologySpreadConstraints)
	}
}

// TestChartConfigWebhook: /validate-config is registered for YuniKorn's
// namespace with a timeoutSeconds of its own, the one the webhook is
// started with for that path, so a configuration that takes seconds to
// judge is judged rather than admitted unchecked.
func TestChartConfigWebhook(t *testing.T) {
	helm(t)
	for _, tc := range []struct {
		sets    []string
		timeout int32
	}{
		{[]string{"webhook.config.enabled=true"}, 10},
		{[]string{"webhook.config.enabled=true", "webhook.config.timeoutSeconds=25", "webhook.timeoutSeconds=5"}, 25},
	} {
		r := render(t, tc.sets...)
		c := r.validating[release+"-yunikorn-config"]
		if c == nil || len(c.Webhooks) != 1 {
			t.Fatalf("%v: no %s-yunikorn-config with one webhook", tc.sets, release)
		}
		h := c.Webhooks[0]
		if svc := h.ClientConfig.Service; svc == nil || svc.Path == nil || *svc.Path != "/validate-config" {
			t.Errorf("%v: clientConfig %+v, want /validate-config", tc.sets, h.ClientConfig)
		}
		if h.TimeoutSeconds == nil || *h.TimeoutSeconds != tc.timeout {
			t.Errorf("%v: timeoutSeconds %v, want %d", tc.sets, deref(h.TimeoutSeconds), tc.timeout)
		}
		if h.FailurePolicy == nil || *h.FailurePolicy != admissionregistrationv1.Ignore {
			t.Errorf("%v: failurePolicy %v, want Ignore", tc.sets, deref(h.FailurePolicy))
		}
		args := r.deployments[webhookService].Spec.Template.Spec.Containers[0].Args
		if want := fmt.Sprintf("--config-timeout-seconds=%d", tc.timeout); !slices.Contains(args, want) {
			t.Errorf("%v: webhook args %v lack %s", tc.sets, args, want)
		}
	}
}

// TestChartPoolSizeBoundsTheWasmPool: webhook.poolSize passes --pool-size,
// 0 (the default) leaves the pool at the threads, and another engine than
// wasm is refused at render, not at the pod's start.
func TestChartPoolSizeBoundsTheWasmPool(t *testing.T) {
	helm(t)
	for _, tt := range []struct {
		name string
		sets []string
		want string // the --pool-size argument, "" when absent
	}{
		{"the default leaves the pool at the threads", nil, ""},
		{"a size is passed", []string{"webhook.poolSize=2"}, "--pool-size=2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			for _, a := range render(t, tt.sets...).deployments[webhookService].Spec.Template.Spec.Containers[0].Args {
				if strings.HasPrefix(a, "--pool-size") {
					got = a
				}
			}
			if got != tt.want {
				t.Errorf("--pool-size argument %q, want %q", got, tt.want)
			}
		})
	}
	_, err := helmTemplate(t, "webhook.poolSize=2", "webhook.engine=rego")
	if err == nil || !strings.Contains(err.Error(), "webhook.poolSize 2: goes with webhook.engine wasm") {
		t.Errorf("poolSize with engine rego: %v, want refused", err)
	}
}
