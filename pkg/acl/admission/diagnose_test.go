package admission

import (
	"slices"
	"strings"
	"testing"
)

// TestDiagnose pins one warning per admission trap (spec §11).
func TestDiagnose(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		code     string
		contains string
	}{
		{"bad pattern falls back to the default", map[string]string{KeyExternalUsers: "(unclosed"}, CodeFallback, KeyExternalUsers},
		{"bypassAuth disables the check", map[string]string{KeyBypassAuth: "true"}, CodeBypassAuth, "anyone may claim any identity"},
		{"empty systemUsers breaks deployments", map[string]string{KeySystemUsers: ""}, CodeNoSystemUsers, "ReplicaSet skip is off"},
		{"default systemUsers misses the controller manager", map[string]string{}, CodeControllerManager, "system:kube-controller-manager"},
		{"untrusted controllers", map[string]string{KeyTrustControllers: "false"}, CodeUntrustedControls, "never get pods"},
		{"unanchored external group", map[string]string{KeyExternalGroups: "admins"}, CodeUnanchoredPattern, `"admins" is unanchored`},
		{"an empty alternative matches everyone", map[string]string{KeyExternalUsers: "^trusted-bot$|"}, CodeMatchesEveryone, "matches every name"},
		{"anchors bind to one alternative each", map[string]string{KeyExternalGroups: "^ops|admin$"}, CodeAlternationAnchors, "bind to one alternative each"},
		{"a prefix matches longer names", map[string]string{KeyExternalGroups: "^platform-admins"}, CodePartialAnchor, `"platform-admins-but-not-really"`},
		{"a suffix matches longer names", map[string]string{KeyExternalUsers: "bot$"}, CodePartialAnchor, "no ^"},
		{"workloads in a bypassed namespace are unchecked", map[string]string{KeyBypassNamespaces: "^kube-system$,^batch$"}, CodeUncheckedWorkloads, "match " + KeyBypassNamespaces},
		{"workloads outside processNamespaces are unchecked", map[string]string{KeyProcessNamespaces: "^team-a$"}, CodeUncheckedWorkloads, "do not match " + KeyProcessNamespaces},
		{"workloads in noLabelNamespaces are unchecked", map[string]string{KeyNoLabelNamespaces: "^legacy$"}, CodeUncheckedWorkloads, KeyNoLabelNamespaces},
		{"repetition split at the comma", map[string]string{KeyExternalUsers: "^a{1,3}$"}, CodeSplitPattern, "cut at a comma"},
		{"workload update is never checked", map[string]string{}, CodeWorkloadUpdate, "Pod UPDATE only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range SettingsFromMap(tt.settings).Diagnose() {
				got = append(got, d.Code+": "+d.Msg)
				if d.Code == tt.code && strings.Contains(d.Msg, tt.contains) {
					return
				}
			}
			t.Errorf("no %s warning containing %q in %q", tt.code, tt.contains, got)
		})
	}
}

// TestDiagnoseAnchoredSettingsAreQuiet: anchored patterns and a trusted
// controller manager leave only the general workload UPDATE warning.
func TestDiagnoseAnchoredSettingsAreQuiet(t *testing.T) {
	s := SettingsFromMap(map[string]string{
		KeySystemUsers:    "^system:serviceaccount:kube-system:,^system:kube-controller-manager$",
		KeyExternalGroups: "^admins$",
	})
	// Only the holes YuniKorn's admission leaves whatever its settings.
	var codes []string
	for _, x := range s.Diagnose() {
		codes = append(codes, x.Code)
	}
	if want := []string{CodeWorkloadUpdate, CodePodUpdate, CodeReplicationControllers, CodeUsernameLabel}; !slices.Equal(codes, want) {
		t.Errorf("got %v, want %v", codes, want)
	}
}

// TestPatternTrapAnchoredForms: patterns anchored at both ends, through
// captures or a factored alternation, draw no warning.
func TestPatternTrapAnchoredForms(t *testing.T) {
	for _, p := range []string{"^x$", "(?<u>^x$)", "(^x$)", "^(ops|admin)$", "^ops$|^admin$", "^system:serviceaccount:kube-system:"} {
		if code, msg := patternTrap(p); code != "" {
			t.Errorf("%q: %s: %s", p, code, msg)
		}
	}
}
