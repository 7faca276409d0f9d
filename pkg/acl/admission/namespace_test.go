package admission

import (
	"strings"
	"testing"
)

// TestNamedBypassedIsWhatASelectorMayLeaveOut pins that only namespaces a
// pattern names exactly, and that the filters do bypass, are returned.
func TestNamedBypassedIsWhatASelectorMayLeaveOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]string
		want []string
	}{
		{"YuniKorn's default", nil, []string{"kube-system"}},
		{"two names and a pattern", map[string]string{KeyBypassNamespaces: "^kube-system$,^infra$,^team-.*$"}, []string{"kube-system", "infra"}},
		{"an unanchored name matches more than itself", map[string]string{KeyBypassNamespaces: "kube-system"}, nil},
		{"nothing bypassed", map[string]string{KeyBypassNamespaces: ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := SettingsFromMap(tc.set)
			if got := s.NamedBypassed(); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("NamedBypassed() = %v, want %v (bypass %v)", got, tc.want, s.BypassNamespaces)
			}
		})
	}
}
