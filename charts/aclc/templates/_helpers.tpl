{{/* The chart's name, overridable. */}}
{{- define "aclc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: objects are named after it. */}}
{{- define "aclc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "aclc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Every object's labels: the chart's, and commonLabels. */}}
{{- define "aclc.labels" -}}
helm.sh/chart: {{ include "aclc.chart" . }}
{{ include "aclc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "aclc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aclc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
aclc.podLabels takes (list $ component componentPodLabels): a pod's
labels, the selectors first, then the component's podLabels over the
chart-wide podLabels over commonLabels. aclc.validate keeps the selector
keys out of the values, so none is written twice.
*/}}
{{- define "aclc.podLabels" -}}
{{- $ := index . 0 }}
{{- include "aclc.selectorLabels" $ }}
app.kubernetes.io/component: {{ index . 1 }}
{{- with merge (dict) (index . 2 | default dict) ($.Values.podLabels | default dict) ($.Values.commonLabels | default dict) }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* aclc.podAnnotations takes (list $ componentPodAnnotations): the component's over the chart-wide ones. */}}
{{- define "aclc.podAnnotations" -}}
{{- $ := index . 0 }}
{{- with merge (dict) (index . 1 | default dict) ($.Values.podAnnotations | default dict) }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
aclc.env takes (list $ resources): a container's environment, GOMEMLIMIT
from the memory limit unless extraEnv sets it, then extraEnv.
*/}}
{{- define "aclc.env" -}}
{{- $ := index . 0 }}
{{- $names := list }}
{{- range $.Values.extraEnv }}
{{- $names = append $names .name }}
{{- end }}
{{- if not (has "GOMEMLIMIT" $names) }}
{{- include "aclc.goMemLimit" (index . 1) }}
{{- end }}
{{- with $.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The webhook's Service: its DNS names are in the serving certificate. */}}
{{- define "aclc.webhookService" -}}
{{- printf "%s-webhook" (include "aclc.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "aclc.tlsSecret" -}}
{{- printf "%s-webhook-tls" (include "aclc.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "aclc.serveService" -}}
{{- printf "%s-serve" (include "aclc.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* serve's TLS Secret: the one named in the values, or the chart's. */}}
{{- define "aclc.serveTLSSecret" -}}
{{- default (printf "%s-serve-tls" (include "aclc.fullname" .) | trunc 63 | trimSuffix "-") .Values.serve.tls.secretName }}
{{- end }}

{{/* The DNS names clients use for serve's Service. */}}
{{- define "aclc.serveDNSNames" -}}
{{- $svc := include "aclc.serveService" . -}}
{{- list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) | toJson }}
{{- end }}

{{- define "aclc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "aclc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "aclc.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end }}
{{- end }}

{{/* The DNS names the API server uses for the webhook's Service. */}}
{{- define "aclc.webhookDNSNames" -}}
{{- $svc := include "aclc.webhookService" . -}}
{{- list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) | toJson }}
{{- end }}

{{/*
The YuniKorn ConfigMaps' mount points, in YuniKorn's order (configs win):
the directory names are the ConfigMap names aclc recognises.
*/}}
{{- define "aclc.configDirs" -}}
{{- with .Values.yunikorn.version }}
- --yunikorn-version={{ . }}
{{- end }}
{{- if .Values.yunikorn.fromCluster }}
- --from-cluster
- --namespace={{ .Values.yunikorn.namespace }}
{{- else }}
- /etc/aclc/yunikorn-defaults
- /etc/aclc/yunikorn-configs
{{- end }}
{{- end }}

{{/* The pods call the API server only to read the configuration live. */}}
{{- define "aclc.automountToken" -}}
{{- or .Values.serviceAccount.automountToken .Values.yunikorn.fromCluster (include "aclc.registers" .) }}
{{- end }}

{{- define "aclc.configVolumes" -}}
{{- if not .Values.yunikorn.fromCluster }}
- name: yunikorn-defaults
  configMap:
    name: {{ .Values.yunikorn.defaultsConfigMap }}
    optional: true
- name: yunikorn-configs
  configMap:
    name: {{ .Values.yunikorn.configsConfigMap }}
    optional: true
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: 16Mi
{{- end }}

{{- define "aclc.configMounts" -}}
{{- if not .Values.yunikorn.fromCluster }}
- name: yunikorn-defaults
  mountPath: /etc/aclc/yunikorn-defaults
  readOnly: true
- name: yunikorn-configs
  mountPath: /etc/aclc/yunikorn-configs
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/*
The webhooks skip the release namespace, webhook.bypassedNamespaces (those
YuniKorn bypasses), webhook.exemptNamespaces, and webhook.excludeNamespaces,
the former name of the same list.
*/}}
{{- define "aclc.exemptNamespaces" -}}
{{- concat (list .Release.Namespace) (.Values.webhook.bypassedNamespaces | default list) (.Values.webhook.exemptNamespaces | default list) (.Values.webhook.excludeNamespaces | default list) | uniq | toYaml }}
{{- end }}

{{/*
aclc.registers is "true" when the webhook's pods put the webhook
configurations in force (webhook.registration=pod).
*/}}
{{- define "aclc.registers" -}}
{{- if and (eq .Values.mode "webhook") (eq .Values.webhook.registration "pod") }}true{{ end }}
{{- end }}

{{/*
aclc.runsPods is "true" when the release runs aclc: the webhook (mode
webhook) or serve. The policies of mode policies are evaluated by the API
server and need no ServiceAccount and no RBAC.
*/}}
{{- define "aclc.runsPods" -}}
{{- if or (eq .Values.mode "webhook") .Values.serve.enabled }}true{{ end }}
{{- end }}

{{/* Refuses values that would install something that cannot work. */}}
{{- define "aclc.validate" -}}
{{- /*
The chart declares no kubeVersion, so that helm template and lint render
offline (they check it against a default version, v1.20 for a helm built
without one); when helm renders against a cluster, which is when lookup
answers, the cluster's version is checked here instead. Whoever installs
the chart's ClusterRole may read Namespaces.
*/}}
{{- if and (lookup "v1" "Namespace" "" "kube-system") (semverCompare "<1.23.0-0" .Capabilities.KubeVersion.Version) }}
{{- fail (printf "Kubernetes %s: the chart needs 1.23 or later" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- /* admissionregistration.k8s.io/v1 serves MutatingAdmissionPolicy from 1.36, ValidatingAdmissionPolicy from 1.30. */}}
{{- if and (eq .Values.mode "policies") (lookup "v1" "Namespace" "" "kube-system") }}
{{- $floor := ternary "1.36.0-0" "1.30.0-0" (contains "kind: MutatingAdmissionPolicy" .Values.policies) }}
{{- if semverCompare (printf "<%s" $floor) .Capabilities.KubeVersion.Version }}
{{- fail (printf "Kubernetes %s: mode policies installs admissionregistration.k8s.io/v1 policies this cluster does not serve (%s or later)" .Capabilities.KubeVersion.Version (trimSuffix "-0" $floor)) }}
{{- end }}
{{- end }}
{{- $own := list "helm.sh/chart" "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/component" }}
{{- range $key, $_ := .Values.commonLabels }}
{{- if has $key $own }}
{{- fail (printf "commonLabels: %s is the chart's own label, set by the chart" $key) }}
{{- end }}
{{- end }}
{{- $selectors := list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/component" }}
{{- range $values, $labels := dict "podLabels" .Values.podLabels "webhook.podLabels" .Values.webhook.podLabels "serve.podLabels" .Values.serve.podLabels }}
{{- range $key, $_ := $labels }}
{{- if has $key $selectors }}
{{- fail (printf "%s: %s selects the chart's pods and is set by the chart" $values $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.webhook.metrics.enabled (eq (int .Values.webhook.metrics.port) (int .Values.webhook.port)) }}
{{- fail (printf "webhook.metrics.port %d is webhook.port: the metrics need a port of their own (plain HTTP beside the webhook's HTTPS)" (int .Values.webhook.metrics.port)) }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled (not .Values.webhook.metrics.enabled) }}
{{- fail "serviceMonitor.enabled scrapes the webhook's metrics port: set webhook.metrics.enabled too" }}
{{- end }}
{{- if eq .Release.Namespace .Values.yunikorn.namespace }}
{{- fail (printf "release namespace %q is YuniKorn's (yunikorn.namespace): install aclc in a namespace of its own, e.g. --namespace aclc-system --create-namespace. The webhooks leave the release namespace out so that aclc can always restart; in YuniKorn's namespace, anyone who may create pods there could set any user.info unchecked, and run a pod that takes the webhook Service's traffic or mounts its TLS Secret" .Release.Namespace) }}
{{- end }}
{{- if not (has .Values.mode (list "webhook" "policies")) }}
{{- fail (printf "mode %q: want webhook or policies" .Values.mode) }}
{{- end }}
{{- if and (eq .Values.mode "policies") (not (trim .Values.policies)) }}
{{- fail "mode policies installs the admission policies of aclc build --target kubernetes: give them with --set-file policies=FILE (the output of aclc build --target kubernetes --output-file FILE SOURCE...)" }}
{{- end }}
{{- if and (eq .Values.mode "webhook") (trim .Values.policies) }}
{{- fail "policies is set but mode is webhook: the policies would be ignored; set mode=policies to install them instead of the webhook (never both: the webhook would see the user.info the policy added as pre-set)" }}
{{- end }}
{{- if and (eq .Values.mode "policies") .Values.serviceMonitor.enabled }}
{{- fail "serviceMonitor.enabled scrapes the webhook, which mode policies does not install" }}
{{- end }}
{{- if not (has .Values.webhook.type (list "mutating" "validating")) }}
{{- fail (printf "webhook.type %q: want mutating or validating (never both: see values.yaml)" .Values.webhook.type) }}
{{- end }}
{{- if not (has .Values.webhook.failurePolicy (list "Ignore" "Fail")) }}
{{- fail (printf "webhook.failurePolicy %q: want Fail or Ignore" .Values.webhook.failurePolicy) }}
{{- end }}
{{- if not (has .Values.webhook.queue.failurePolicy (list "Ignore" "Fail")) }}
{{- fail (printf "webhook.queue.failurePolicy %q: want Ignore or Fail" .Values.webhook.queue.failurePolicy) }}
{{- end }}
{{- if not (has .Values.certificates.provider (list "helm" "cert-manager")) }}
{{- fail (printf "certificates.provider %q: want helm or cert-manager" .Values.certificates.provider) }}
{{- end }}
{{- if and .Values.yunikorn.fromCluster (or (ne .Values.yunikorn.defaultsConfigMap "yunikorn-defaults") (ne .Values.yunikorn.configsConfigMap "yunikorn-configs")) }}
{{- fail "yunikorn.fromCluster reads yunikorn-defaults and yunikorn-configs, the names YuniKorn reads; other ConfigMap names need the mounted directories (fromCluster false)" }}
{{- end }}
{{- $t := int .Values.webhook.timeoutSeconds }}
{{- if or (lt $t 1) (gt $t 30) }}
{{- fail (printf "webhook.timeoutSeconds %d: want 1 to 30 (the API server's limits)" $t) }}
{{- end }}
{{- end }}

{{/*
aclc.generateTLS makes the webhook's CA and serving certificate once per
render and keeps them in .Values.certificates.generated (base64 PEM: ca,
crt, key), so the Secret and the caBundle agree whichever template runs
first. An upgrade reuses the Secret already in the cluster, so the CA
does not change under the running pods.
*/}}
{{- define "aclc.generateTLS" -}}
{{- if not .Values.certificates.generated }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "aclc.tlsSecret" .) }}
{{- if and $existing $existing.data (index $existing.data "ca.crt") (index $existing.data "tls.crt") (index $existing.data "tls.key") }}
{{- $_ := set .Values.certificates "generated" (dict "ca" (index $existing.data "ca.crt") "crt" (index $existing.data "tls.crt") "key" (index $existing.data "tls.key")) }}
{{- else }}
{{- $days := int .Values.certificates.validityDays }}
{{- $svc := include "aclc.webhookService" . }}
{{- $ca := genCA (printf "%s-ca" $svc) $days }}
{{- $cert := genSignedCert (printf "%s.%s.svc" $svc .Release.Namespace) nil (include "aclc.webhookDNSNames" . | fromJsonArray) $days $ca }}
{{- $_ := set .Values.certificates "generated" (dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
aclc.goMemLimit renders GOMEMLIMIT, 90% of a container's memory limit (a
Kubernetes quantity), in bytes: the Go runtime then collects harder as it
nears the limit, with room left for what it does not count. Nothing when
there is no limit: Go's default, no soft limit.
*/}}
{{- define "aclc.goMemLimit" -}}
{{- $limit := dig "limits" "memory" "" . | toString }}
{{- if $limit }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $limit }}
{{- $suffix := trimPrefix $number $limit }}
{{- $units := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 }}
{{- if or (not $number) (not (hasKey $units $suffix)) }}
{{- fail (printf "resources.limits.memory %q: want a number of bytes with an optional k, M, G, T, Ki, Mi, Gi or Ti suffix (GOMEMLIMIT is set to 90%% of it)" $limit) }}
{{- end }}
- name: GOMEMLIMIT
  value: {{ mulf $number (index $units $suffix) 0.9 | floor | int64 | quote }}
{{- end }}
{{- end }}

{{/*
The guard's pods/status rule: a pods/status UPDATE reaches the webhooks only
when it changes the identity the scheduler reads (user.info, or the
username label); the kubelet's status updates never do, so they never wait
on the webhook. Match conditions are on by default from Kubernetes 1.28;
before it the status subresource is not registered.
*/}}
{{- define "aclc.statusRule" -}}
{{- if semverCompare ">=1.28.0-0" .Capabilities.KubeVersion.Version }}
- operations: ["UPDATE"]
  apiGroups: [""]
  apiVersions: ["v1"]
  resources: ["pods/status"]
{{- end }}
{{- end }}

{{- define "aclc.statusMatch" -}}
{{- if semverCompare ">=1.28.0-0" .Capabilities.KubeVersion.Version }}
matchConditions:
  - name: status-changes-identity
    expression: >-
      !has(request.subResource) || request.subResource != "status" ||
      object.metadata.?annotations[?"yunikorn.apache.org/user.info"].orValue("") != oldObject.metadata.?annotations[?"yunikorn.apache.org/user.info"].orValue("") ||
      object.metadata.?labels[?"yunikorn.apache.org/username"].orValue("") != oldObject.metadata.?labels[?"yunikorn.apache.org/username"].orValue("")
{{- end }}
{{- end }}
