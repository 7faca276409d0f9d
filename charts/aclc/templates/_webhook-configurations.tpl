{{/*
The webhook configurations, one document each, without the "---" between
them. webhook-configuration.yaml installs them as they are
(webhook.registration=helm), or installs them empty and keeps these in a
ConfigMap the webhook's pods put in force once one of them is ready
(webhook.registration=pod).
*/}}
{{- define "aclc.webhookConfiguration.userInfo" -}}
{{- $mutating := eq .Values.webhook.type "mutating" }}
{{- $svc := include "aclc.webhookService" . }}
# {{ ternary "Registered as YuniKorn registers its own webhook: /mutate adds user.info on CREATE and checks it." "Check only: /validate answers the same decision without the patch; user.info is never added." $mutating }}
# Only one of the two kinds is ever installed (webhook.type): see values.yaml.
apiVersion: admissionregistration.k8s.io/v1
kind: {{ ternary "MutatingWebhookConfiguration" "ValidatingWebhookConfiguration" $mutating }}
metadata:
  name: {{ include "aclc.fullname" . }}-yunikorn-user-info
  labels:
    {{- include "aclc.labels" . | nindent 4 }}
    app.kubernetes.io/component: webhook
  {{- if eq .Values.certificates.provider "cert-manager" }}
  annotations:
    # cert-manager's CA injector writes the Certificate's CA into caBundle.
    cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ $svc }}
  {{- end }}
webhooks:
  - name: {{ ternary "mutate" "validate" $mutating }}.{{ $svc }}.{{ .Release.Namespace }}.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    # Fail by default: skipped, the webhook would let anyone who may create
    # pods claim any identity (see values.yaml).
    failurePolicy: {{ .Values.webhook.failurePolicy }}
    # The webhook runs with --timeout-seconds of the same value and answers
    # a second before the API server gives up.
    timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}
    {{- if $mutating }}
    # A later mutating webhook may change the pod template; user.info is
    # only added, never rewritten, so one call is enough.
    reinvocationPolicy: Never
    {{- end }}
    clientConfig:
      service:
        name: {{ $svc }}
        namespace: {{ .Release.Namespace }}
        path: {{ ternary "/mutate" "/validate" $mutating }}
        port: 443
      {{- if eq .Values.certificates.provider "helm" }}
      {{- include "aclc.generateTLS" . }}
      caBundle: {{ .Values.certificates.generated.ca }}
      {{- end }}
    # The webhook's own namespace is left out, so its pods can always be
    # recreated, even with failurePolicy Fail while none answers, and so
    # are the namespaces YuniKorn bypasses (webhook.bypassedNamespaces) and
    # webhook.exemptNamespaces.
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: NotIn
          values:
            {{- include "aclc.exemptNamespaces" . | nindent 12 }}
        {{- with .Values.webhook.namespaceSelectorExpressions }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    rules:
      {{- toYaml .Values.webhook.rules | nindent 6 }}
      {{- include "aclc.statusRule" . | nindent 6 }}
    {{- include "aclc.statusMatch" . | nindent 4 }}
{{- end }}

{{- define "aclc.webhookConfiguration.queue" -}}
{{- $svc := include "aclc.webhookService" . }}
# YuniKorn's placement at admission: /validate-queue refuses a pod YuniKorn
# would reject and warns when it would run elsewhere than the queue it names.
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{ include "aclc.fullname" . }}-yunikorn-queue
  labels:
    {{- include "aclc.labels" . | nindent 4 }}
    app.kubernetes.io/component: webhook
  {{- if eq .Values.certificates.provider "cert-manager" }}
  annotations:
    cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ $svc }}
  {{- end }}
webhooks:
  - name: validate-queue.{{ $svc }}.{{ .Release.Namespace }}.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    # Ignore by default: YuniKorn refuses the application itself; this
    # only brings the refusal forward (see values.yaml).
    failurePolicy: {{ .Values.webhook.queue.failurePolicy }}
    timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}
    clientConfig:
      service:
        name: {{ $svc }}
        namespace: {{ .Release.Namespace }}
        path: /validate-queue
        port: 443
      {{- if eq .Values.certificates.provider "helm" }}
      {{- include "aclc.generateTLS" . }}
      caBundle: {{ .Values.certificates.generated.ca }}
      {{- end }}
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: NotIn
          values:
            {{- include "aclc.exemptNamespaces" . | nindent 12 }}
        {{- with .Values.webhook.namespaceSelectorExpressions }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    rules:
      {{- toYaml .Values.webhook.rules | nindent 6 }}
      {{- include "aclc.statusRule" . | nindent 6 }}
    {{- include "aclc.statusMatch" . | nindent 4 }}
{{- end }}

{{- define "aclc.webhookConfiguration.config" -}}
{{- $svc := include "aclc.webhookService" . }}
# YuniKorn's ConfigMaps: /validate-config refuses a change YuniKorn's
# validator refuses, with its message, and admits the rest with warnings
# saying what the change does.
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{ include "aclc.fullname" . }}-yunikorn-config
  labels:
    {{- include "aclc.labels" . | nindent 4 }}
    app.kubernetes.io/component: webhook
  {{- if eq .Values.certificates.provider "cert-manager" }}
  annotations:
    cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ $svc }}
  {{- end }}
webhooks:
  - name: validate-config.{{ $svc }}.{{ .Release.Namespace }}.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: {{ .Values.webhook.config.failurePolicy }}
    timeoutSeconds: {{ .Values.webhook.config.timeoutSeconds }}
    clientConfig:
      service:
        name: {{ $svc }}
        namespace: {{ .Release.Namespace }}
        path: /validate-config
        port: 443
      {{- if eq .Values.certificates.provider "helm" }}
      {{- include "aclc.generateTLS" . }}
      caBundle: {{ .Values.certificates.generated.ca }}
      {{- end }}
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: In
          values: [{{ .Values.yunikorn.namespace | quote }}]
    rules:
      - operations: ["CREATE", "UPDATE"]
        apiGroups: [""]
        apiVersions: ["v1"]
        resources: ["configmaps"]
{{- end }}
