// Package admission holds the reference semantics of YuniKorn's admission controller for the yunikorn.apache.org/user.info annotation: its settings, who may set the annotation, and the AdmissionReview answers.
//
// It is plain Go over the Kubernetes API types and is the oracle the Rego
// decision yunikorn/admission/review is compared with. Every rule follows
// apache/yunikorn-k8shim (pkg/admission) as pinned in
// spec/yunikorn-admission.md, quirks included.
//
// # Scope
//
// In scope: the admissionController.accessControl.* and
// admissionController.filtering.{process,bypass,label,noLabel}Namespaces
// settings and YuniKorn's way of parsing them (Settings, SettingsFromMap,
// LoadSettings); the namespace filters with their namespace annotations
// (ShouldProcessNamespace, ShouldLabelNamespace); who may set the annotation
// (IsAnnotationAllowed), what value is accepted (ValidateAnnotation) and
// written (UserInfoValue); and the full decision of the mutating webhook for
// the annotation on CREATE and UPDATE of pods and workloads (Review).
//
// Out of scope are the webhook's other mutations of a pod on CREATE: the
// schedulerName op, the app-id and queue labels op, and the
// yunikorn.apache.org/allow-preemption annotation. Review therefore answers a
// Pod CREATE with a patch that holds only the user.info annotations op, where
// YuniKorn's patch carries more ops after it (and, in a namespace that is
// labelled, the allow-preemption key merged into that same op's value). A
// processed pod whose annotation is not added (bypassAuth, or a pre-set
// value) gets no patch here, where YuniKorn still sends the other ops.
// Workload patches are exactly YuniKorn's. The HTTP layer (status 400, 415
// and 404 for an empty body, a wrong Content-Type or path) is the
// transport's business: Review answers an empty or undecodable body as
// YuniKorn answers a body that does not decode.
//
// See https://github.com/apache/yunikorn-k8shim/tree/master/pkg/admission
package admission
