package webhook

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
)

// CheckCABundle makes sure the file holds PEM certificates and nothing
// else, so a private key never ends up in a cluster object.
func CheckCABundle(b []byte) error {
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("holds a %s block; caBundle takes certificates only", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return errors.New("no PEM certificate")
	}
	return nil
}

// Manifest is a webhook configuration that registers 'aclc webhook' with
// the API server.
type Manifest struct {
	// Service and Namespace name the Service in front of the webhook, Port
	// its port.
	Service, Namespace string
	Port               int
	// CABundle is the PEM of the CA that signed the webhook's certificate
	// (CheckCABundle), empty to leave it out.
	CABundle []byte
	// FailurePolicy is Fail or Ignore; "" for the type's default.
	FailurePolicy  string
	TimeoutSeconds int
	// Type is mutating, validating, queue or config.
	Type string
	// ConfigNamespace is YuniKorn's namespace, for the config type.
	ConfigNamespace string
	// StaticURL, when set, writes the configuration for the API server to
	// load from a file at start, calling this URL (the path appended).
	StaticURL string
}

// manifestView is what the template reads.
type manifestView struct {
	Manifest
	CABundle           string
	Kind, Path, Prefix string
}

// ConfigType is the Type that registers /validate-config.
const ConfigType = "config"

// ErrManifest is matched by an error of a Manifest's fields.
var ErrManifest = errors.New("invalid webhook manifest")

// Write checks m, fills in its defaults and writes the configuration.
// An error of its fields matches ErrManifest and names the field as the
// command line spells it (--port).
func (m Manifest) Write(w io.Writer) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrManifest}, a...)...)
	}
	for _, v := range []struct{ flag, value string }{{"--service-name", m.Service}, {"--namespace", m.Namespace}, {"--config-namespace", m.ConfigNamespace}} {
		if errs := validation.IsDNS1123Label(v.value); len(errs) > 0 {
			return bad("%s %q: %s", v.flag, v.value, strings.Join(errs, "; "))
		}
	}
	if m.StaticURL != "" {
		u, err := url.Parse(m.StaticURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return bad("--static-url %q: want https://HOST[:PORT], the webhook's address as the API server reaches it", m.StaticURL)
		}
		m.StaticURL = strings.TrimSuffix(m.StaticURL, "/")
	}
	if m.Port < 1 || m.Port > 65535 {
		return bad("--port %d: want 1 to 65535", m.Port)
	}
	if m.FailurePolicy == "" {
		m.FailurePolicy = "Fail"
		if m.Type == "queue" || m.Type == ConfigType {
			m.FailurePolicy = "Ignore"
		}
	}
	if m.FailurePolicy != "Ignore" && m.FailurePolicy != "Fail" {
		return bad("--failure-policy %q: want Fail or Ignore", m.FailurePolicy)
	}
	if m.TimeoutSeconds < 1 || m.TimeoutSeconds > 30 {
		return bad("--timeout-seconds %d: want 1 to 30 (the API server's limits)", m.TimeoutSeconds)
	}
	v := manifestView{Manifest: m}
	switch m.Type {
	case "mutating":
		v.Kind, v.Path, v.Prefix = "MutatingWebhookConfiguration", "/mutate", "mutate"
	case "validating":
		v.Kind, v.Path, v.Prefix = "ValidatingWebhookConfiguration", "/validate", "validate"
	case "queue":
		v.Kind, v.Path, v.Prefix = "ValidatingWebhookConfiguration", "/validate-queue", "validate-queue"
	case ConfigType:
		v.Kind, v.Path, v.Prefix = "ValidatingWebhookConfiguration", "/validate-config", "validate-config"
	default:
		return bad("--type %q: want mutating, validating, queue or config", m.Type)
	}
	if len(m.CABundle) > 0 {
		if err := CheckCABundle(m.CABundle); err != nil {
			return err
		}
		v.CABundle = base64.StdEncoding.EncodeToString(m.CABundle)
	}
	return manifestTemplate.Execute(w, v)
}

var manifestTemplate = template.Must(template.New("manifest").Parse(`# {{.Kind}} for 'aclc webhook' behind Service {{.Namespace}}/{{.Service}}:
{{- if eq .Prefix "validate-config"}}
# YuniKorn's ConfigMaps (yunikorn-configs, yunikorn-defaults) in namespace
# {{.ConfigNamespace}}: a change YuniKorn's own validator refuses is refused with
# its message; one it accepts is admitted with warnings that kubectl prints:
# who gains or loses access to which queue, which pods land elsewhere, and
# what YuniKorn accepts but its scheduler will not run.
{{- else if eq .Prefix "validate-queue"}}
# YuniKorn's placement at admission (yunikorn/admission/queue): a pod, or a
# workload whose pods, YuniKorn would reject is refused with the reason; one it
# would place elsewhere than the queue it names is admitted with a warning.
# It changes nothing, so it goes with either user.info webhook.
{{- else}}
# YuniKorn's admission rules for the yunikorn.apache.org/user.info annotation
# (who may set it, its validity, no change on pod UPDATE{{if eq .Prefix "mutate"}}, and adding it on CREATE{{end}}).
{{- end}}
{{- if or (eq .Prefix "validate-queue") (eq .Prefix "validate-config")}}
{{- else if eq .Prefix "mutate"}}
# Registered as YuniKorn registers its own webhook (path /mutate, same rules).
# Do not also register 'aclc webhook manifests --type validating': a validating
# webhook sees the object after this one, so the user.info added here looks
# pre-set and would be refused for every requester who may not set it.
{{- else}}
# Check only: /validate answers the same decision without the patch, so
# user.info is never added. For clusters where only trusted front-ends and
# controllers set it. Do not combine with a mutating webhook that adds
# user.info (aclc's or YuniKorn's): the added value would look pre-set and be
# refused for every requester who may not set it.
{{- end}}
#
{{- if eq .Prefix "validate-config"}}
# failurePolicy Ignore: while the webhook is down, ConfigMap changes are
# admitted unchecked and without warnings, as YuniKorn's own validation webhook
# admits them when its scheduler does not answer. Fail: no change to YuniKorn's
# ConfigMaps is admitted while the webhook is down.
{{- else}}
# failurePolicy is the trade-off between availability and enforcement:
#   Ignore (YuniKorn's default): while the webhook is down or slower than
#     timeoutSeconds, objects are admitted without it: no user.info is added,
#     so the scheduler sees their pods as user "nobody", and a pre-set
#     user.info (or yunikorn.apache.org/username label) is not checked, so
#     anyone who may create pods may claim to be anyone meanwhile.
#   Fail: nothing these rules match is admitted while the webhook is down;
#     user.info can never be skipped or forged. Run several replicas with a
#     PodDisruptionBudget. The webhook's own namespace is then left out
#     (namespaceSelector below) so that its pods can always be recreated; keep
#     untrusted workloads out of that namespace, and consider leaving
#     kube-system out as well.
{{- end}}
# This file: failurePolicy {{.FailurePolicy}}.
apiVersion: admissionregistration.k8s.io/v1
kind: {{.Kind}}
{{- if .StaticURL}}
# Static: for the API server to load at start from the staticManifestsDir of
# its {{if eq .Kind "MutatingWebhookConfiguration"}}MutatingAdmissionWebhook{{else}}ValidatingAdmissionWebhook{{end}} plugin's WebhookAdmission configuration
# (Kubernetes 1.37+, see 'aclc webhook manifests -h'); it calls the URL.
{{- end}}
metadata:
  name: aclc-yunikorn-{{if eq .Prefix "validate-queue"}}queue{{else if eq .Prefix "validate-config"}}config{{else}}user-info{{end}}{{if .StaticURL}}.static.k8s.io{{end}}
webhooks:
  - name: {{.Prefix}}.{{.Service}}.{{.Namespace}}.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: {{.FailurePolicy}}
    # Start 'aclc webhook --timeout-seconds {{.TimeoutSeconds}}': it answers every
    # review, denied if need be, a second before the API server gives up.
    timeoutSeconds: {{.TimeoutSeconds}}
    clientConfig:
{{- if .StaticURL}}
      url: {{.StaticURL}}{{.Path}}
{{- else}}
      service:
        name: {{.Service}}
        namespace: {{.Namespace}}
        path: {{.Path}}
        port: {{.Port}}
{{- end}}
{{- if .CABundle}}
      caBundle: {{.CABundle}}
{{- else if .StaticURL}}
      # caBundle: base64 of the PEM CA that signed the webhook's certificate;
      # give --ca-file: the API server reads this file as it is written.
{{- else}}
      # caBundle: base64 of the PEM CA that signed the webhook's certificate;
      # give --ca-file, or let cert-manager's CA injector fill it in.
{{- end}}
{{- if eq .Prefix "validate-config"}}
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: In
          values: ["{{.ConfigNamespace}}"]
    rules:
      - operations: ["CREATE", "UPDATE"]
        apiGroups: [""]
        apiVersions: ["v1"]
        resources: ["configmaps"]
{{- else}}
{{- if eq .FailurePolicy "Fail"}}
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: NotIn
          values: ["{{.Namespace}}"]
{{- end}}
    rules:
      - operations: ["CREATE", "UPDATE"]
        apiGroups: ["", "apps", "batch"]
        apiVersions: ["v1"]
        resources: ["pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs", "replicationcontrollers"]
      # The guard: a pods/status UPDATE can change annotations and labels.
      - operations: ["UPDATE"]
        apiGroups: [""]
        apiVersions: ["v1"]
        resources: ["pods/status"]
    # Only the status updates that change the identity reach the webhook:
    # the kubelet's never do.
    matchConditions:
      - name: status-changes-identity
        expression: >-
          !has(request.subResource) || request.subResource != "status" ||
          object.metadata.?annotations[?"yunikorn.apache.org/user.info"].orValue("") != oldObject.metadata.?annotations[?"yunikorn.apache.org/user.info"].orValue("") ||
          object.metadata.?labels[?"yunikorn.apache.org/username"].orValue("") != oldObject.metadata.?labels[?"yunikorn.apache.org/username"].orValue("")
{{- end}}
`))
