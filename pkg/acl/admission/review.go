package admission

import (
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

const (
	reviewAPIVersion = "admission.k8s.io/v1"
	reviewKind       = "AdmissionReview"

	// The answer to a body that does not decode or has no request (spec §2).
	invalidBodyUID      = "yunikorn-invalid-body"
	msgBodyDecodeFailed = "body decode failed"

	msgChangeNotAllowed = "user info annotation change is not allowed"

	// A pod labelled app=yunikorn is YuniKorn's own and is left alone.
	labelApp    = "app"
	yunikornPod = "yunikorn"

	// Any of these pod-template labels, non-empty, lets a workload (or a pod
	// UPDATE) through the filter in a namespace that is not labelled; the
	// canonical one from release 1.6.0 (passesFilter).
	labelCanonicalAppID = "yunikorn.apache.org/app-id"
	labelAppID          = "applicationId"
	labelSparkAppID     = "spark-app-selector"

	podAnnotationsPath      = "/metadata/annotations"
	templateAnnotationsPath = "/spec/template/metadata/annotations"
	cronJobAnnotationsPath  = "/spec/jobTemplate/spec/template/metadata/annotations"
)

// The kinds compared with request.kind.kind, case-sensitively.
const (
	kindPod         = "Pod"
	kindDeployment  = "Deployment"
	kindDaemonSet   = "DaemonSet"
	kindStatefulSet = "StatefulSet"
	kindReplicaSet  = "ReplicaSet"
	kindJob         = "Job"
	kindCronJob     = "CronJob"
)

// deserializer is YuniKorn's: the universal deserializer of an empty
// scheme. AdmissionReview is not registered, so the body's kind and
// apiVersion are not required, the request is decoded case-sensitively
// (sigs.k8s.io/json), and a YAML body is accepted too. Only the objects
// inside the request are decoded with encoding/json.
var deserializer = serializer.NewCodecFactory(runtime.NewScheme()).UniversalDeserializer()

// patchOperation is YuniKorn's common.PatchOperation.
type patchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Review answers an admission.k8s.io/v1 AdmissionReview (raw JSON) exactly as YuniKorn's mutating webhook does for the user.info annotation. The result is the AdmissionReview with only `response`, marshalled as YuniKorn marshals it. A review the API server cannot have sent (CheckCanonical) is denied.
//
// namespaces holds the namespaces YuniKorn's namespace cache would know,
// keyed by name; a namespace that is missing has no annotations. The
// [context] mutations are left out (see the package documentation), so a
// Pod CREATE patch holds only the annotations ops: the user.info op and, on
// releases up to 1.9.0 in a namespace processed but not labelled, the
// ignore-application op that replaces it.
func (s *Settings) Review(review []byte, namespaces map[string]Namespace) []byte {
	s = s.settings()
	return answer(review, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return s.mutate(req, namespaces, true)
	})
}

// answer is the envelope of every review this package decides: a review the
// API server cannot have sent is denied, a body that does not decode as an
// AdmissionReview with a request is denied, and decide answers the rest.
func answer(review []byte, decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) []byte {
	if out := NonCanonicalReview(review); out != nil {
		return out
	}
	var ar admissionv1.AdmissionReview
	var resp *admissionv1.AdmissionResponse
	if _, _, err := deserializer.Decode(review, nil, &ar); err != nil || ar.Request == nil {
		resp = response(invalidBodyUID, false, msgBodyDecodeFailed, nil)
	} else {
		resp = decide(ar.Request)
	}
	out, err := json.Marshal(reviewOf(resp))
	if err != nil {
		// Strings, a bool and bytes always marshal; invalid UTF-8 in a
		// message is replaced, not refused.
		panic("admission: marshal review: " + err.Error())
	}
	return out
}

// reviewOf wraps a response in the AdmissionReview envelope.
func reviewOf(resp *admissionv1.AdmissionResponse) admissionv1.AdmissionReview {
	return admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: reviewAPIVersion, Kind: reviewKind},
		Response: resp,
	}
}

// response is YuniKorn's admissionResponseBuilder: a status only for a
// non-empty message, a patch type only for a non-empty patch.
func response(uid string, allowed bool, message string, patch []byte) *admissionv1.AdmissionResponse {
	res := &admissionv1.AdmissionResponse{UID: types.UID(uid), Allowed: allowed}
	if message != "" {
		res.Result = &metav1.Status{Message: message}
	}
	if len(patch) != 0 {
		res.Patch = patch
		pt := admissionv1.PatchTypeJSONPatch
		res.PatchType = &pt
	}
	return res
}

// mutate is YuniKorn's mutate (spec §4.2): UPDATE checks pods only; any
// other operation is a CREATE, of a Pod or of a workload.
//
// ignoreApp adds the release's ignore-application annotations op
// (release.IgnoreApplicationAnnotation) to a Pod CREATE patch: the review
// predicts it, the guard leaves it out so that the requester's user.info
// stays.
func (s *Settings) mutate(req *admissionv1.AdmissionRequest, namespaces map[string]Namespace, ignoreApp bool) *admissionv1.AdmissionResponse {
	if req == nil {
		// Unreachable from Review, which answers a missing request as a
		// body that does not decode; kept as YuniKorn has it.
		return response("", false, "", nil)
	}
	// The object's own metadata.namespace is never used.
	namespace := req.Namespace
	if namespace == "" {
		namespace = "default"
	}
	if req.Operation == admissionv1.Update {
		if req.Kind.Kind == kindPod {
			return s.processPodUpdate(req, namespace, namespaces)
		}
		// Workload UPDATE is not checked (spec §11.4).
		return response(string(req.UID), true, "", nil)
	}
	if req.Kind.Kind == kindPod {
		return s.processPod(req, namespace, namespaces, ignoreApp)
	}
	return s.processWorkload(req, namespace, namespaces)
}

// processPod is the Pod CREATE flow (spec §4.2), without the [context] ops.
// The annotation is checked and op #1 recorded before the app=yunikorn and
// namespace filters, so a pre-set annotation is denied even where the pod
// would otherwise be left alone.
//
// Releases up to 1.9.0 (release.IgnoreApplicationAnnotation) end the patch
// of a pod in a namespace they process but do not label with a second add
// of /metadata/annotations: the pod's own annotations plus
// yunikorn.apache.org/ignore-application. It replaces op #1, so such a pod
// is admitted without user.info. With ignoreApp that op is kept, as
// YuniKorn sends it.
func (s *Settings) processPod(req *admissionv1.AdmissionRequest, namespace string, namespaces map[string]Namespace, ignoreApp bool) *admissionv1.AdmissionResponse {
	uid := string(req.UID)
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return response(uid, false, err.Error(), nil)
	}
	user, groups := req.UserInfo.Username, req.UserInfo.Groups
	denial, set := s.checkUserInfo(pod.Annotations, user, groups, uid)
	if denial != nil {
		return denial
	}
	var patch []patchOperation
	if !set && !s.BypassAuth {
		patch = append(patch, annotationsOp(podAnnotationsPath, pod.Annotations, user, groups))
	}
	if pod.Labels[labelApp] == yunikornPod {
		return response(uid, true, "", nil)
	}
	if !s.ShouldProcessNamespace(namespace, namespaces) {
		return response(uid, true, "", nil)
	}
	// [context] YuniKorn appends the schedulerName op here and, when the
	// namespace is labelled, the labels op, and merges the allow-preemption
	// key into op #1 (or appends its own annotations op).
	if ignoreApp && s.release.Has(release.IgnoreApplicationAnnotation) && !s.ShouldLabelNamespace(namespace, namespaces) {
		patch = append(patch, ignoreApplicationOp(pod.Annotations))
	}
	if len(patch) == 0 {
		return response(uid, true, "", nil)
	}
	return response(uid, true, "", marshalPatch(patch))
}

// processWorkload is the workload CREATE flow (spec §4.2): the ReplicaSet
// skip, the kind check, the decode, the filter, and only then the
// annotation check on the pod template.
func (s *Settings) processWorkload(req *admissionv1.AdmissionRequest, namespace string, namespaces map[string]Namespace) *admissionv1.AdmissionResponse {
	return s.processWorkloadOf(req, namespace, namespaces, false)
}

// processWorkloadOf is processWorkload, taking a ReplicationController as
// YuniKorn takes a Deployment when rc is set (the guard's
// replication-controllers part).
func (s *Settings) processWorkloadOf(req *admissionv1.AdmissionRequest, namespace string, namespaces map[string]Namespace, rc bool) *admissionv1.AdmissionResponse {
	uid := string(req.UID)
	// A ReplicaSet from a system user is skipped (YUNIKORN-1627): mutating
	// it would make the deployment controller re-create it endlessly. It
	// uses systemUsers whatever trustControllers says.
	if req.Kind.Kind == kindReplicaSet && s.isSystemUser(req.UserInfo.Username) {
		return response(uid, true, "", nil)
	}
	tmpl, supported, err := podTemplate(req.Kind.Kind, req.Object.Raw, rc)
	if !supported {
		return response(uid, true, "", nil)
	}
	if err != nil {
		return response(uid, false, err.Error(), nil)
	}
	if !s.passesFilter(namespace, tmpl.labels, namespaces) {
		return response(uid, true, "", nil)
	}
	user, groups := req.UserInfo.Username, req.UserInfo.Groups
	denial, set := s.checkUserInfo(tmpl.annotations, user, groups, uid)
	if denial != nil {
		return denial
	}
	if !set && !s.BypassAuth {
		return response(uid, true, "", marshalPatch([]patchOperation{
			annotationsOp(tmpl.path, tmpl.annotations, user, groups),
		}))
	}
	return response(uid, true, "", nil)
}

// processPodUpdate is the Pod UPDATE flow (spec §4.3): nobody may change
// the annotation, whoever asks and whatever the access-control settings.
func (s *Settings) processPodUpdate(req *admissionv1.AdmissionRequest, namespace string, namespaces map[string]Namespace) *admissionv1.AdmissionResponse {
	uid := string(req.UID)
	var newPod, oldPod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &newPod); err != nil {
		return response(uid, false, err.Error(), nil)
	}
	// A missing oldObject is empty Raw: "unexpected end of JSON input".
	if err := json.Unmarshal(req.OldObject.Raw, &oldPod); err != nil {
		return response(uid, false, err.Error(), nil)
	}
	// Only the new pod's label counts.
	if v, ok := newPod.Labels[labelApp]; ok && v == yunikornPod {
		return response(uid, true, "", nil)
	}
	if !s.passesFilter(namespace, newPod.Labels, namespaces) {
		return response(uid, true, "", nil)
	}
	// A raw string comparison: absent equals "", and equal JSON written
	// differently is a change.
	if oldPod.Annotations[UserInfoAnnotation] != newPod.Annotations[UserInfoAnnotation] {
		return response(uid, false, msgChangeNotAllowed, nil)
	}
	return response(uid, true, "", nil)
}

// passesFilter is YuniKorn's shouldProcessAdmissionReview: a processed
// namespace, and an app-id label or a labelled namespace. The admission
// controller of a release before 1.6.0 does not count the canonical
// app-id label (release.AppIDLabelNotFiltered).
func (s *Settings) passesFilter(namespace string, labels map[string]string, namespaces map[string]Namespace) bool {
	appID := labels[labelAppID] != "" || labels[labelSparkAppID] != "" ||
		(labels[labelCanonicalAppID] != "" && !s.release.Has(release.AppIDLabelNotFiltered))
	return s.ShouldProcessNamespace(namespace, namespaces) &&
		(appID || s.ShouldLabelNamespace(namespace, namespaces))
}

// checkUserInfo is YuniKorn's checkUserInfoAnnotation: a present annotation
// (even "") is checked unless bypassAuth is on, authorization before
// validity. It returns the denial, if any, and whether the key is present.
func (s *Settings) checkUserInfo(annotations map[string]string, user string, groups []string, uid string) (*admissionv1.AdmissionResponse, bool) {
	value, set := annotations[UserInfoAnnotation]
	if !set || s.BypassAuth {
		return nil, set
	}
	if !s.IsAnnotationAllowed(user, groups) {
		return response(uid, false, notAllowedMessage(user, groups), nil), set
	}
	if err := ValidateAnnotation(value); err != nil {
		return response(uid, false, err.Error(), nil), set
	}
	return nil, set
}

func notAllowedMessage(user string, groups []string) string {
	return fmt.Sprintf("user %s with groups [%s] is not allowed to set user annotation", user, strings.Join(groups, ","))
}

// annotationsOp adds the whole annotations object: the existing
// annotations plus user.info. An RFC 6902 add on an existing member
// replaces it, so no annotation key ever appears in a path.
func annotationsOp(path string, annotations map[string]string, user string, groups []string) patchOperation {
	value := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		value[k] = v
	}
	value[UserInfoAnnotation] = UserInfoValue(user, groups)
	return patchOperation{Op: "add", Path: path, Value: value}
}

// IgnoreApplicationAnnotation is the annotation with which releases up to
// 1.9.0 mark the pods of a namespace they process but do not label.
const IgnoreApplicationAnnotation = "yunikorn.apache.org/ignore-application"

// ignoreApplicationOp is YuniKorn's disableYuniKorn op: the pod's original
// annotations (without the user.info op #1 adds) plus ignore-application.
func ignoreApplicationOp(annotations map[string]string) patchOperation {
	value := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		value[k] = v
	}
	value[IgnoreApplicationAnnotation] = "true"
	return patchOperation{Op: "add", Path: podAnnotationsPath, Value: value}
}

func marshalPatch(patch []patchOperation) []byte {
	b, err := json.Marshal(patch)
	if err != nil {
		panic("admission: marshal patch: " + err.Error())
	}
	return b
}

// template is the pod template of a workload.
type template struct {
	labels, annotations map[string]string
	path                string
}

// podTemplate decodes a workload as YuniKorn's extractors do, with
// encoding/json into the API type of the kind, so that decode errors read
// as YuniKorn's. A CronJob is decoded as batch/v1beta1, as YuniKorn does;
// its JSON shape is that of batch/v1.
func podTemplate(kind string, raw []byte, rc bool) (template, bool, error) {
	path, t, err := podTemplateSpecOf(kind, raw, rc)
	if path == "" {
		return template{}, false, nil
	}
	if err != nil {
		return template{}, true, err
	}
	return template{labels: t.Labels, annotations: t.Annotations, path: path}, true, nil
}

// podTemplateSpec decodes a workload and returns the annotations patch path
// of its pod template and the template; the path is "" for a kind that is
// not a workload.
func podTemplateSpec(kind string, raw []byte) (string, corev1.PodTemplateSpec, error) {
	var t *corev1.PodTemplateSpec
	var obj any
	path := templateAnnotationsPath
	switch kind {
	case kindDeployment:
		o := &appsv1.Deployment{}
		obj, t = o, &o.Spec.Template
	case kindDaemonSet:
		o := &appsv1.DaemonSet{}
		obj, t = o, &o.Spec.Template
	case kindStatefulSet:
		o := &appsv1.StatefulSet{}
		obj, t = o, &o.Spec.Template
	case kindReplicaSet:
		o := &appsv1.ReplicaSet{}
		obj, t = o, &o.Spec.Template
	case kindJob:
		o := &batchv1.Job{}
		obj, t = o, &o.Spec.Template
	case kindCronJob:
		o := &batchv1beta1.CronJob{}
		obj, t = o, &o.Spec.JobTemplate.Spec.Template
		path = cronJobAnnotationsPath
	default:
		return "", corev1.PodTemplateSpec{}, nil
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return path, corev1.PodTemplateSpec{}, err
	}
	return path, *t, nil
}
