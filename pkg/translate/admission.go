package translate

import (
	"strconv"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
)

// EntrypointAdmissionReview is the admission decision.
const EntrypointAdmissionReview = "yunikorn/admission/review"

// AdmissionData is data.aclc.admission: the settings after YuniKorn's
// parsing (a key that fell back holds its default), with the patterns as
// lists in order.
func AdmissionData(s *admission.Settings) map[string]any {
	list := func(p []string) []string {
		if p == nil {
			return []string{}
		}
		return p
	}
	return map[string]any{
		"bypass_auth":         s.BypassAuth,
		"trust_controllers":   s.TrustControllers,
		"system_users":        list(s.SystemUsers),
		"external_users":      list(s.ExternalUsers),
		"external_groups":     list(s.ExternalGroups),
		"process_namespaces":  list(s.ProcessNamespaces),
		"bypass_namespaces":   list(s.BypassNamespaces),
		"label_namespaces":    list(s.LabelNamespaces),
		"no_label_namespaces": list(s.NoLabelNamespaces),
	}
}

// EntrypointAdmissionQueue is the placement decision at admission: what
// YuniKorn does with the application a pod or a workload's pods become.
const EntrypointAdmissionQueue = "yunikorn/admission/queue"

// QueueReviewFlags are the two scheduler settings the pod → application
// rules read: admissionController.filtering.generateUniqueAppId and
// service.disableGangScheduling, false when absent. CheckSettings has
// refused a value strconv.ParseBool does not accept.
func (s *Sources) QueueReviewFlags() (uniqueAppID, disableGangScheduling bool) {
	flag := func(key string) bool {
		if s.Layout == nil {
			return false
		}
		v, ok := s.Layout.Get(key)
		if !ok {
			return false
		}
		b, _ := strconv.ParseBool(v.Text)
		return b
	}
	return flag(admission.KeyGenerateUniqueAppID), flag(admission.KeyDisableGangScheduling)
}

// AdmissionQueueData is data.aclc.admission_queue: the scheduler settings
// the queue review reads besides the admission settings.
func (s *Sources) AdmissionQueueData() map[string]any {
	unique, noGang := s.QueueReviewFlags()
	return map[string]any{"unique_app_id": unique, "disable_gang_scheduling": noGang}
}
