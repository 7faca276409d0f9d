package admission

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// GuardPart names one way around YuniKorn's admission that the guard
// closes (docs/GUARD.md). Each is on unless turned off.
type GuardPart string

// The guard's parts, in the order they are listed.
const (
	// GuardUsernameLabel refuses a yunikorn.apache.org/username label that
	// names anyone but the requester, on releases whose scheduler reads it.
	GuardUsernameLabel GuardPart = "username-label"
	// GuardPodUpdate refuses every change of user.info on a pod UPDATE,
	// subresources included.
	GuardPodUpdate GuardPart = "pod-update"
	// GuardReplicationControllers treats a ReplicationController as
	// YuniKorn treats a Deployment.
	GuardReplicationControllers GuardPart = "replication-controllers"
	// GuardWorkloadUpdate checks a template user.info set or changed by a
	// workload UPDATE as a pre-set one on CREATE.
	GuardWorkloadUpdate GuardPart = "workload-update"
	// GuardFilteredWorkloads checks a workload's pre-set template
	// user.info where YuniKorn's namespace and app-id filters pass it by.
	GuardFilteredWorkloads GuardPart = "filtered-workloads"
)

// GuardParts lists every part of the guard.
func GuardParts() []GuardPart {
	return []GuardPart{GuardUsernameLabel, GuardPodUpdate, GuardReplicationControllers, GuardWorkloadUpdate, GuardFilteredWorkloads}
}

// GuardAll names every part in a --guard-off list.
const GuardAll = "all"

// ParseGuardOff reads a --guard-off list: part names separated by commas,
// or "all". Empty items are skipped; an unknown name is an error naming
// the valid ones.
func ParseGuardOff(list []string) ([]GuardPart, error) {
	seen := map[GuardPart]bool{}
	for _, item := range list {
		for _, name := range strings.Split(item, ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
			case name == GuardAll:
				for _, p := range GuardParts() {
					seen[p] = true
				}
			case slices.Contains(GuardParts(), GuardPart(name)):
				seen[GuardPart(name)] = true
			default:
				valid := []string{GuardAll}
				for _, p := range GuardParts() {
					valid = append(valid, string(p))
				}
				return nil, fmt.Errorf("unknown guard part %q: valid are %s", name, strings.Join(valid, ", "))
			}
		}
	}
	var out []GuardPart
	for _, p := range GuardParts() {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// WithGuardOff returns a copy of the settings whose guard has the parts
// off turned off; s is left as it was.
func (s *Settings) WithGuardOff(off []GuardPart) *Settings {
	c := *s.settings()
	c.guardOff = map[GuardPart]bool{}
	for _, p := range off {
		c.guardOff[p] = true
	}
	return &c
}

// GuardOff returns the parts of the guard that are off, in list order.
func (s *Settings) GuardOff() []GuardPart {
	s = s.settings()
	var out []GuardPart
	for _, p := range GuardParts() {
		if s.guardOff[p] {
			out = append(out, p)
		}
	}
	return out
}

func (s *Settings) guardOn(p GuardPart) bool { return !s.guardOff[p] }

// The kind the guard adds to YuniKorn's workload kinds.
const kindReplicationController = "ReplicationController"

// The guard's explanations, appended to a message YuniKorn would not send.
var guardWhy = map[GuardPart]string{
	GuardUsernameLabel:          "the scheduler runs a pod without user.info as the user this label names",
	GuardPodUpdate:              "YuniKorn lets it through for a pod labelled app=yunikorn, outside the namespaces it labels and on subresources, and the scheduler then runs the pod as the new user",
	GuardReplicationControllers: "YuniKorn does not check ReplicationControllers, whose pods a trusted controller creates with this annotation",
	GuardWorkloadUpdate:         "YuniKorn does not check a workload UPDATE, and the pods a trusted controller then creates carry this annotation",
	GuardFilteredWorkloads:      "YuniKorn does not check a workload its namespace filters pass by, yet the pods a trusted controller creates carry this annotation",
}

// GuardMessage is msg as the guard's part p refuses it: the reason, the
// part and how to turn it off.
func GuardMessage(msg string, p GuardPart) string {
	return fmt.Sprintf("%s (aclc guard %s: %s; guard-off=%s allows it)", msg, p, guardWhy[p], p)
}

// labelMessage is the refusal of a username label naming someone else.
func labelMessage(user string, groups []string, value string) string {
	return GuardMessage(fmt.Sprintf("user %s with groups [%s] is not allowed to set label %s to %s", user, strings.Join(groups, ","), LabelUsername, value), GuardUsernameLabel)
}

// Guard answers an AdmissionReview as aclc's guard does (docs/GUARD.md):
// YuniKorn's answer (Review), then the refusals of the guard's parts that
// are on, and for a ReplicationController CREATE the patch YuniKorn adds to
// a Deployment. A request for a subresource, which YuniKorn never sees, is
// checked by the guard alone.
func (s *Settings) Guard(review []byte, namespaces map[string]Namespace) []byte {
	s = s.settings()
	return answer(review, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return s.guard(req, namespaces)
	})
}

func (s *Settings) guard(req *admissionv1.AdmissionRequest, namespaces map[string]Namespace) *admissionv1.AdmissionResponse {
	uid := string(req.UID)
	namespace := req.Namespace
	if namespace == "" {
		namespace = "default"
	}
	rc := req.Kind.Kind == kindReplicationController && s.guardOn(GuardReplicationControllers)
	var base *admissionv1.AdmissionResponse
	switch {
	case req.SubResource != "":
		base = response(uid, true, "", nil)
	case rc && req.Operation != admissionv1.Update:
		base = s.processWorkloadOf(req, namespace, namespaces, true)
	default:
		// Without the ignore-application op of releases up to 1.9.0,
		// which would replace the user.info op: the guard's pod keeps
		// the requester's identity.
		base = s.mutate(req, namespaces, false)
	}
	if !base.Allowed {
		if rc && req.Operation != admissionv1.Update && base.Result != nil {
			base.Result.Message = GuardMessage(base.Result.Message, GuardReplicationControllers)
		}
		return base
	}
	if msg := s.guardRefusal(req, namespace, namespaces, rc); msg != "" {
		return response(uid, false, msg, nil)
	}
	return base
}

// guardRefusal is the guard's message for a request YuniKorn admits, ""
// when the guard admits it too.
func (s *Settings) guardRefusal(req *admissionv1.AdmissionRequest, namespace string, namespaces map[string]Namespace, rc bool) string {
	user, groups := req.UserInfo.Username, req.UserInfo.Groups
	// Who may choose an identity: YuniKorn's own answer for user.info.
	mayChoose := s.BypassAuth || s.IsAnnotationAllowed(user, groups)
	labelRead := s.guardOn(GuardUsernameLabel) && s.release.Has(release.UsernameLabel)
	// label refuses a username label naming someone else, set where it
	// was not before, or uncovered by an UPDATE that empties the user.info
	// it stood behind.
	label := func(newLabels, oldLabels, newAnnotations, oldAnnotations map[string]string, update bool) string {
		v := newLabels[LabelUsername]
		uncovered := oldAnnotations[UserInfoAnnotation] != "" && newAnnotations[UserInfoAnnotation] == ""
		if !labelRead || v == "" || v == user || mayChoose || (update && v == oldLabels[LabelUsername] && !uncovered) {
			return ""
		}
		return labelMessage(user, groups, v)
	}
	update := req.Operation == admissionv1.Update
	switch {
	case req.Kind.Kind == kindPod && update && !labelRead && !s.guardOn(GuardPodUpdate),
		req.Kind.Kind != kindPod && update && !labelRead && !s.guardOn(GuardWorkloadUpdate):
		return "" // no part of the guard reads the objects
	}
	if req.Kind.Kind == kindPod {
		var pod, old corev1.Pod
		if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
			return err.Error()
		}
		if !update {
			return label(pod.Labels, nil, nil, nil, false)
		}
		if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
			return err.Error()
		}
		if s.guardOn(GuardPodUpdate) && old.Annotations[UserInfoAnnotation] != pod.Annotations[UserInfoAnnotation] {
			return GuardMessage(msgChangeNotAllowed, GuardPodUpdate)
		}
		return label(pod.Labels, old.Labels, pod.Annotations, old.Annotations, true)
	}
	if req.SubResource != "" {
		// A workload's subresources (scale, status) cannot change its
		// template.
		return ""
	}
	kind := req.Kind.Kind
	if kind == kindReplicaSet && s.isSystemUser(user) {
		return "" // YuniKorn's skip: the deployment controller's copy
	}
	path, tmpl, err := podTemplateSpecOf(kind, req.Object.Raw, rc)
	if path == "" {
		return ""
	}
	if err != nil {
		return err.Error()
	}
	if !update {
		part := GuardFilteredWorkloads
		if rc {
			part = GuardReplicationControllers
		}
		// YuniKorn checked the template where its filters pass it (or,
		// for a ReplicationController, the guard did, as YuniKorn would).
		if s.guardOn(GuardFilteredWorkloads) && !s.passesFilter(namespace, tmpl.Labels, namespaces) {
			if msg := s.presetRefusal(tmpl.Annotations, user, groups); msg != "" {
				return GuardMessage(msg, part)
			}
		}
		return label(tmpl.Labels, nil, nil, nil, false)
	}
	_, old, err := podTemplateSpecOf(kind, req.OldObject.Raw, rc)
	if err != nil {
		return err.Error()
	}
	if s.guardOn(GuardWorkloadUpdate) {
		nv, set := tmpl.Annotations[UserInfoAnnotation]
		if set && nv != old.Annotations[UserInfoAnnotation] {
			if msg := s.presetRefusal(tmpl.Annotations, user, groups); msg != "" {
				return GuardMessage(msg, GuardWorkloadUpdate)
			}
		}
	}
	return label(tmpl.Labels, old.Labels, tmpl.Annotations, old.Annotations, true)
}

// presetRefusal is YuniKorn's check of a pre-set user.info (who set it,
// then whether it decodes), "" when it passes or is absent.
func (s *Settings) presetRefusal(annotations map[string]string, user string, groups []string) string {
	value, set := annotations[UserInfoAnnotation]
	if !set || s.BypassAuth {
		return ""
	}
	if !s.IsAnnotationAllowed(user, groups) {
		return notAllowedMessage(user, groups)
	}
	if err := ValidateAnnotation(value); err != nil {
		return err.Error()
	}
	return ""
}

// podTemplateSpecOf is podTemplateSpec, with a ReplicationController's
// template when rc is set. A ReplicationController's template is optional:
// without one its pod metadata is empty.
func podTemplateSpecOf(kind string, raw []byte, rc bool) (string, corev1.PodTemplateSpec, error) {
	if kind != kindReplicationController {
		return podTemplateSpec(kind, raw)
	}
	if !rc {
		return "", corev1.PodTemplateSpec{}, nil
	}
	o := &corev1.ReplicationController{}
	if err := json.Unmarshal(raw, o); err != nil {
		return templateAnnotationsPath, corev1.PodTemplateSpec{}, err
	}
	if o.Spec.Template == nil {
		// Nothing to patch, and no pod to create: the API server refuses
		// a ReplicationController without a template.
		return "", corev1.PodTemplateSpec{}, nil
	}
	return templateAnnotationsPath, *o.Spec.Template, nil
}

// GuardPartNames returns the parts as strings, sorted, for messages and
// data documents.
func GuardPartNames(parts []GuardPart) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	sort.Strings(out)
	return out
}
