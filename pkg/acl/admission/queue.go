package admission

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission/internal/si"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// The queue review (spec yunikorn-placement.md §4, §5.2) answers, at
// admission, what YuniKorn's scheduler will do with the application a pod
// or a workload's pods become: the shim's pod → application rules (§4.2 to
// §4.5) feed the placement decision (§5.1), and a rejection or a diversion
// becomes a denial or a warning.

// Pod labels and annotations the shim reads (spec yunikorn-placement.md §4).
const (
	labelQueue             = "yunikorn.apache.org/queue"
	labelQueueShort        = "queue"
	annotationTaskGroups   = "yunikorn.apache.org/task-groups"
	annotationSchedParams  = "yunikorn.apache.org/schedulingPolicyParameters"
	annotationParentQueue  = "yunikorn.apache.org/parentqueue"
	annotationNSQuota      = "yunikorn.apache.org/namespace.quota"
	annotationNSMaxCPU     = "yunikorn.apache.org/namespace.max.cpu"
	annotationNSMaxMemory  = "yunikorn.apache.org/namespace.max.memory"
	annotationNSGuaranteed = "yunikorn.apache.org/namespace.guaranteed"
	annotationNSMaxApps    = "yunikorn.apache.org/namespace.maxApps"

	tagNamespace         = "namespace"
	tagForce             = "application.create.force"
	tagImagePullSecrets  = "imagePullSecrets"
	tagCreationTime      = "yunikorn.apache.org/creationTime"
	tagParentQueue       = "namespace.parentqueue"
	tagResourceQuota     = "namespace.resourcequota"
	tagResourceGuarantee = "namespace.resourceguaranteed"
	tagMaxApps           = "namespace.resourcemaxapps"

	schedulerName = "yunikorn"
	// unknownUID stands for a pod UID the API server has not assigned yet.
	unknownUID = "<pod uid>"
	// uniqueAutogen is the app-id suffix the admission controller writes
	// where the shim puts the pod UID.
	uniqueAutogen = "-uniqueautogen"
	nobody        = "nobody"
)

// LabelUsername is the pod label the shim of releases up to 1.9.0 reads
// the user from when the pod has no user.info annotation.
const LabelUsername = "yunikorn.apache.org/username"

// KeyGenerateUniqueAppID and KeyDisableGangScheduling are the two
// scheduler settings the pod → application rules read.
const (
	KeyGenerateUniqueAppID   = "admissionController.filtering.generateUniqueAppId"
	KeyDisableGangScheduling = "service.disableGangScheduling"
)

// podControllerGroups are the groups of a kube-controller-manager service
// account (spec §5.2 step 5c).
var podControllerGroups = []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}

// PodControllerUsers returns, by workload kind, the service account of
// the controller that creates the kind's pods (spec step 5c).
func PodControllerUsers() map[string]string { return maps.Clone(podControllerUsers) }

// podControllerUsers names the controller that creates a workload's pods.
var podControllerUsers = map[string]string{
	kindDeployment:  "system:serviceaccount:kube-system:replicaset-controller",
	kindReplicaSet:  "system:serviceaccount:kube-system:replicaset-controller",
	kindStatefulSet: "system:serviceaccount:kube-system:statefulset-controller",
	kindDaemonSet:   "system:serviceaccount:kube-system:daemon-set-controller",
	kindJob:         "system:serviceaccount:kube-system:job-controller",
	kindCronJob:     "system:serviceaccount:kube-system:job-controller",
}

// QueueReview is the yunikorn/admission/queue decision: the admission
// controller's settings (namespace filters, who adds user.info), the queue
// configuration and its placement rules, and the cluster state it reads.
type QueueReview struct {
	Settings *Settings
	Tree     *yunikorn.QueueTree
	Resolver builtins.GroupResolver
	// UniqueAppID is admissionController.filtering.generateUniqueAppId.
	UniqueAppID bool
	// DisableGangScheduling is service.disableGangScheduling: the
	// task-groups tag is then not set.
	DisableGangScheduling bool
	// Namespaces are the replicated namespaces, keyed by name; one that is
	// missing has no annotations, and the answer warns about it.
	Namespaces map[string]Namespace
	// State is data.yunikorn.state: the queues only the scheduler knows.
	State *yunikorn.PlacementState
}

// QueueApplication is what the shim would submit for the reviewed object,
// with how its identity was found.
type QueueApplication struct {
	Application yunikorn.Application
	// Controller is set when the user is the controller that will create
	// the pods (spec §5.2 step 5c).
	Controller bool
}

// Review answers an admission.k8s.io/v1 AdmissionReview (raw JSON): denied
// with YuniKorn's rejection when the scheduler would reject the application,
// allowed with warnings when it would place it elsewhere than asked (spec
// yunikorn-placement.md §5.2). A review the API server cannot have sent is
// denied, as for the user.info review.
func (q *QueueReview) Review(review []byte) []byte {
	return answer(review, q.decide)
}

// queueKinds are the kinds whose pods the decision looks at (step 1).
var queueKinds = map[string]bool{
	kindPod: true, kindDeployment: true, kindReplicaSet: true, kindStatefulSet: true,
	kindDaemonSet: true, kindJob: true, kindCronJob: true,
}

// CannotReadMessage is the denial of an object that does not decode (step 2).
func CannotReadMessage(kind, err string) string {
	return "yunikorn: cannot read " + kind + ": " + err
}

func (q *QueueReview) decide(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	uid := string(req.UID)
	allow := response(uid, true, "", nil)
	// Step 1: the operations and kinds that make or change pods.
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allow
	}
	kind := req.Kind.Kind
	if !queueKinds[kind] {
		return allow
	}
	// Step 2: the namespace and the pod as the shim will see it.
	ns := req.Namespace
	if ns == "" {
		ns = "default"
	}
	if msg := DecodeError(kind, req.Object.Raw); msg != "" {
		return response(uid, false, CannotReadMessage(kind, msg), nil)
	}
	meta, spec := podOf(kind, req.Object.Raw)
	// Step 3: a Pod UPDATE matters only while the pod is gated: no
	// application exists for it before the last gate goes.
	if req.Operation == admissionv1.Update && kind == kindPod {
		if msg := DecodeError(kind, req.OldObject.Raw); msg != "" {
			return response(uid, false, CannotReadMessage(kind, msg), nil)
		}
		var old corev1.Pod
		_ = json.Unmarshal(req.OldObject.Raw, &old)
		if len(old.Spec.SchedulingGates) == 0 {
			return allow
		}
	}
	app, ok := q.Application(req, ns, kind, meta, spec)
	if !ok {
		return allow
	}
	tree := q.Tree
	if tree == nil {
		tree = &yunikorn.QueueTree{}
	}
	r := q.Resolver
	if r == nil {
		r = yunikorn.NoResolver{}
	}
	p := tree.Place(yunikorn.PlacementInput{Partition: "default", Application: app.Application, State: q.State}, r)
	id := app.Application.ID
	switch {
	case p.Panic != "":
		return response(uid, false, fmt.Sprintf("yunikorn: the scheduler would crash placing application %s: %s [%s]", id, p.Panic, p.Reason), nil)
	case !p.Allow:
		return response(uid, false, fmt.Sprintf("yunikorn: application %s would be rejected: %s [%s]", id, p.Message, p.Reason), nil)
	}
	var warnings []string
	named := app.Application.Queue
	if named != "" && p.Rule != yunikorn.RuleProvided {
		warnings = append(warnings, fmt.Sprintf("yunikorn: queue %q is not used: application %s would run in %s (rule %s)", named, id, p.Queue, p.Rule))
	}
	if !p.Forced && p.Queue == yunikorn.RecoveryQueue {
		warnings = append(warnings, fmt.Sprintf("yunikorn: application %s would run in the recovery queue %s", id, yunikorn.RecoveryQueue))
	}
	if named != "" && id == SharedAppID(ns) {
		warnings = append(warnings, fmt.Sprintf("yunikorn: application %s is shared by all pods of namespace %s without an application id; if it already exists this pod joins it and keeps its queue", id, ns))
	}
	if app.Controller {
		warnings = append(warnings, fmt.Sprintf("yunikorn: user taken to be %s (the controller that creates the pods)", app.Application.User))
	}
	if _, known := q.Namespaces[ns]; !known {
		warnings = append(warnings, fmt.Sprintf("yunikorn: namespace %s is not known; its annotations were taken as absent", ns))
	}
	resp := response(uid, true, "", nil)
	resp.Warnings = warnings
	return resp
}

// podOf is the pod metadata and spec of an object that decodes: the Pod's
// own, or the pod template's of a workload (admission spec §4.2 table).
func podOf(kind string, raw []byte) (metav1.ObjectMeta, corev1.PodSpec) {
	if kind == kindPod {
		var pod corev1.Pod
		_ = json.Unmarshal(raw, &pod)
		return pod.ObjectMeta, pod.Spec
	}
	_, t, _ := podTemplateSpec(kind, raw)
	return t.ObjectMeta, t.Spec
}

// Application is steps 4 to 6 of the decision: whether YuniKorn schedules
// the pods at all, and the application the shim would submit for them. ok
// is false for pods YuniKorn does not schedule.
func (q *QueueReview) Application(req *admissionv1.AdmissionRequest, ns, kind string, meta metav1.ObjectMeta, spec corev1.PodSpec) (QueueApplication, bool) {
	s := q.Settings.settings()
	labelledYuniKorn := meta.Labels[labelApp] == yunikornPod
	processed := s.ShouldProcessNamespace(ns, q.Namespaces)
	// Step 4: the admission controller sets the scheduler name on pod
	// CREATE in a processed namespace, unless the pod is YuniKorn's own.
	if spec.SchedulerName != schedulerName && (labelledYuniKorn || !processed) {
		return QueueApplication{}, false
	}
	var out QueueApplication
	app := &out.Application
	// Step 5: the identity the scheduler will read from user.info.
	value, present := meta.Annotations[UserInfoAnnotation]
	create := req.Operation == admissionv1.Create
	// Releases up to 1.9.0 end the patch of a pod CREATE in a namespace
	// they process but do not label with the pod's own annotations and
	// ignore-application, which replaces the user.info the patch adds: to
	// the pod itself, or to the pod a workload's controller creates. The
	// pod then runs as its username label's user, or nobody. (A template's
	// user.info is among the pod's own annotations and stays.)
	lost := q.release().Has(release.IgnoreApplicationAnnotation) && processed && !labelledYuniKorn && !s.ShouldLabelNamespace(ns, q.Namespaces)
	switch {
	case value != "":
		app.User, app.Groups = userFromAnnotation(value)
	case !present && create && !s.BypassAuth && q.addsUserInfo(req, ns, kind, meta.Labels, labelledYuniKorn, processed) && !(kind == kindPod && lost):
		app.User, app.Groups = req.UserInfo.Username, req.UserInfo.Groups
		if app.User == "" {
			app.User = nobody
		}
	case !present && kind != kindPod && !s.BypassAuth && processed && !labelledYuniKorn && !lost:
		app.User, app.Groups, out.Controller = podControllerUsers[kind], podControllerGroups, true
	case q.release().Has(release.UsernameLabel) && meta.Labels[LabelUsername] != "":
		// Releases up to 1.9.0 still read the user from this label when
		// user.info is absent or empty; the groups are then resolved.
		app.User = meta.Labels[LabelUsername]
	default:
		app.User = nobody
	}
	// Step 6: id, queue and tags.
	uid := string(meta.UID)
	if kind != kindPod || uid == "" {
		uid = unknownUID
	}
	app.ID = q.appID(meta, ns, uid)
	if q.release().Has(release.LegacyMetadataPrecedence) {
		// 1.5's shim reads the label queue first and no canonical label.
		app.Queue = firstNonEmpty(meta.Labels[labelQueueShort], meta.Annotations[labelQueue])
	} else {
		app.Queue = firstNonEmpty(meta.Labels[labelQueue], meta.Annotations[labelQueue], meta.Labels[labelQueueShort])
	}
	if app.Queue == "" && q.release().Has(release.ShimDefaultQueue) {
		app.Queue = yunikorn.DefaultQueue
	}
	app.Tags = q.tags(meta, spec, ns)
	return out, true
}

// release is the YuniKorn release the review decides as: the queue
// configuration's.
func (q *QueueReview) release() release.Version {
	if q.Tree == nil {
		return release.Default()
	}
	return q.Tree.Release
}

// addsUserInfo reports whether YuniKorn's admission controller adds
// user.info to this object on CREATE (admission spec §4.2): a Pod not
// labelled app=yunikorn in a processed namespace; a workload past the
// ReplicaSet skip and the workload filter.
func (q *QueueReview) addsUserInfo(req *admissionv1.AdmissionRequest, ns, kind string, labels map[string]string, labelledYuniKorn, processed bool) bool {
	s := q.Settings.settings()
	if kind == kindPod {
		return !labelledYuniKorn && processed
	}
	if kind == kindReplicaSet && s.isSystemUser(req.UserInfo.Username) {
		return false
	}
	return s.passesFilter(ns, labels, q.Namespaces)
}

// userFromAnnotation is the shim's reading of a non-empty user.info value
// (spec §4.4): one that does not decode, or decodes to no user, is nobody;
// the groups are kept as decoded.
func userFromAnnotation(value string) (string, []string) {
	var ugi si.UserGroupInformation
	if err := json.Unmarshal([]byte(value), &ugi); err != nil {
		return nobody, nil
	}
	if ugi.User == "" {
		return nobody, ugi.Groups
	}
	return ugi.User, ugi.Groups
}

// SharedAppID is the application id of every pod of ns without one (spec
// §4.2), cut to 63 characters.
func SharedAppID(ns string) string {
	return truncate("yunikorn-"+ns+"-autogen", 63)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// appID is the shim's application id (spec §4.2).
func (q *QueueReview) appID(meta metav1.ObjectMeta, ns, uid string) string {
	id := firstNonEmpty(meta.Labels[labelCanonicalAppID], meta.Annotations[labelCanonicalAppID], meta.Labels[labelAppID], meta.Labels[labelSparkAppID])
	if q.release().Has(release.LegacyMetadataPrecedence) {
		// 1.5's shim reads no canonical label.
		id = firstNonEmpty(meta.Annotations[labelCanonicalAppID], meta.Labels[labelAppID], meta.Labels[labelSparkAppID])
	}
	switch {
	case id != "":
		if base, cut := strings.CutSuffix(id, uniqueAutogen); cut {
			return base + "-" + uid
		}
		return id
	case q.UniqueAppID:
		return truncate(ns, 26) + "-" + uid
	}
	return SharedAppID(ns)
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// tags are the application's tags (spec §4.5).
func (q *QueueReview) tags(meta metav1.ObjectMeta, spec corev1.PodSpec, ns string) map[string]string {
	tags := map[string]string{}
	if !q.release().Has(release.NoForceCreateTag) {
		// The 1.5 shim never sets the tag: no pod reaches the recovery queue.
		tags[tagForce] = strconv.FormatBool(spec.NodeName != "")
	}
	if len(spec.ImagePullSecrets) > 0 {
		names := make([]string, len(spec.ImagePullSecrets))
		for i, s := range spec.ImagePullSecrets {
			names[i] = s.Name
		}
		tags[tagImagePullSecrets] = strings.Join(names, ",")
	}
	if !q.DisableGangScheduling {
		tags[annotationTaskGroups] = meta.Annotations[annotationTaskGroups]
	}
	tags[annotationSchedParams] = meta.Annotations[annotationSchedParams]
	if !meta.CreationTimestamp.IsZero() {
		tags[tagCreationTime] = strconv.FormatInt(meta.CreationTimestamp.Unix(), 10)
	}
	for k, v := range NamespaceTags(ns, q.Namespaces) {
		tags[k] = v
	}
	return tags
}

// NamespaceTags are the tags the shim derives from the application's
// namespace ns: the namespace tag itself, and the tags of its annotations
// (parent queue, quota, guaranteed resources, maximum applications) in
// namespaces, the replicated namespaces by name. A namespace that is not
// there has no annotations.
func NamespaceTags(ns string, namespaces map[string]Namespace) map[string]string {
	tags := map[string]string{tagNamespace: ns}
	ann := namespaces[ns].Annotations
	if v := ann[annotationParentQueue]; v != "" {
		tags[tagParentQueue] = v
	}
	if v, ok := resourceTag(ann[annotationNSQuota]); ok {
		tags[tagResourceQuota] = v
	} else if ann[annotationNSQuota] == "" && (ann[annotationNSMaxCPU] != "" || ann[annotationNSMaxMemory] != "") {
		tags[tagResourceQuota] = legacyQuotaTag(ann[annotationNSMaxCPU], ann[annotationNSMaxMemory])
	}
	if v, ok := resourceTag(ann[annotationNSGuaranteed]); ok {
		tags[tagResourceGuarantee] = v
	}
	if v := ann[annotationNSMaxApps]; v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			tags[tagMaxApps] = v
		}
	}
	return tags
}

// resourceObject is a JSON object of one or more string values, the shape
// of YuniKorn's namespace resource annotations ({"cpu": "1", "memory":
// "1G"}). The policy holds the same pattern (policy/rego/admission/queue.rego).
var resourceObject = regexp.MustCompile(`^[ \t\r\n]*\{` + resourceEntry + `(?:,` + resourceEntry + `)*\}[ \t\r\n]*$`)

const (
	jsonString    = `"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`
	resourceEntry = `[ \t\r\n]*` + jsonString + `[ \t\r\n]*:[ \t\r\n]*` + jsonString + `[ \t\r\n]*`
)

// resourceTag is the tag value for a namespace resource annotation: set
// when the annotation is a JSON object of strings with at least one entry.
// YuniKorn writes its own resource JSON after parsing the quantities; aclc
// keeps the annotation as written. Both hold a '{', so neither is ever a
// valid queue name and only the tag's presence changes a placement (see
// docs/RATIONALE.md).
func resourceTag(raw string) (string, bool) {
	return raw, resourceObject.MatchString(raw)
}

// legacyQuotaTag is the quota tag from the deprecated namespace.max.*
// annotations, as a JSON object.
func legacyQuotaTag(cpu, memory string) string {
	m := map[string]string{}
	if cpu != "" {
		m["cpu"] = cpu
	}
	if memory != "" {
		m["memory"] = memory
	}
	b, _ := json.Marshal(m)
	return string(b)
}
