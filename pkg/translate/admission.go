package translate

import (
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
