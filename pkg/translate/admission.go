package translate

import (
	"regexp"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// AdmissionData is data.aclc.admission: the settings after YuniKorn's
// parsing (a key that fell back holds its default), with the patterns as
// lists in order, and under "exact" the lists that are sets of names (see
// exactNames), so that the policy looks a name up where it would otherwise
// match patterns, through a host call on the Wasm engine.
func AdmissionData(s *admission.Settings) map[string]any {
	list := func(p []string) []string {
		if p == nil {
			return []string{}
		}
		return p
	}
	exact := map[string]any{}
	for field, p := range map[string][]string{
		"system_users":        s.SystemUsers,
		"external_users":      s.ExternalUsers,
		"external_groups":     s.ExternalGroups,
		"process_namespaces":  s.ProcessNamespaces,
		"bypass_namespaces":   s.BypassNamespaces,
		"label_namespaces":    s.LabelNamespaces,
		"no_label_namespaces": s.NoLabelNamespaces,
	} {
		if names := exactNames(p); names != nil {
			exact[field] = names
		}
	}
	return map[string]any{
		"exact":               exact,
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

// exactNames returns the names a pattern list matches when every pattern is
// ^name$ with no metacharacter in name: Go's MatchString (and RE2's) then
// matches name and nothing else, since ^ and $ match only at the ends of the
// text without the m flag. It returns nil for any other list, whose patterns
// the policy matches; an empty list is an empty set.
func exactNames(patterns []string) map[string]bool {
	names := map[string]bool{}
	for _, p := range patterns {
		if len(p) < 2 || p[0] != '^' || p[len(p)-1] != '$' {
			return nil
		}
		name := p[1 : len(p)-1]
		if regexp.QuoteMeta(name) != name {
			return nil
		}
		names[name] = true
	}
	return names
}

// QueueReviewFlags are the two scheduler settings the pod → application
// rules read (see queueReviewFlags).
func (s *Sources) QueueReviewFlags() (uniqueAppID, disableGangScheduling bool) {
	return queueReviewFlags(s.layout)
}

// admissionQueueData is data.aclc.admission_queue: the scheduler settings
// the queue review reads besides the admission settings.
func admissionQueueData(c *layout.Config) map[string]any {
	unique, noGang := queueReviewFlags(c)
	return map[string]any{"unique_app_id": unique, "disable_gang_scheduling": noGang}
}
