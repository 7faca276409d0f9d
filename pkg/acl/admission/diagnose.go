package admission

import (
	"fmt"
	"strings"
)

// Diagnostic is a warning about settings YuniKorn accepts but that probably
// do not do what their author meant (spec §11).
type Diagnostic struct {
	Code string
	Msg  string
}

// Diagnostic codes.
const (
	CodeFallback           = "fallback"
	CodeBypassAuth         = "bypass-auth"
	CodeNoSystemUsers      = "no-system-users"
	CodeUntrustedControls  = "controllers-untrusted"
	CodeUnanchoredPattern  = "unanchored-pattern"
	CodeWorkloadUpdate     = "workload-update-unchecked"
	CodeSplitPattern       = "pattern-split-at-comma"
	CodeControllerManager  = "controller-manager-not-trusted"
	controllerManagerIdent = "system:kube-controller-manager"
)

// Diagnose returns the traps of the settings; fallbacks come first.
func (s *Settings) Diagnose() []Diagnostic {
	s = s.settings()
	var out []Diagnostic
	add := func(code, format string, a ...any) { out = append(out, Diagnostic{code, fmt.Sprintf(format, a...)}) }
	for _, f := range s.Fallbacks {
		add(CodeFallback, "%s (YuniKorn logs an error and uses the default; the ConfigMap is never rejected)", f)
	}
	if s.BypassAuth {
		add(CodeBypassAuth, "%s is true: user.info is never added, and a pre-set value is kept unchecked, so anyone may claim any identity (Pod UPDATE protection stays on)", KeyBypassAuth)
	}
	if len(s.SystemUsers) == 0 {
		add(CodeNoSystemUsers, "%s is empty: no controller is trusted and the ReplicaSet skip is off, so the ReplicaSets deployment-controller creates with an inherited annotation are denied", KeySystemUsers)
	} else if !s.isSystemUser(controllerManagerIdent) {
		add(CodeControllerManager, "%s does not match %s, the identity of controllers that run without per-controller service accounts", KeySystemUsers, controllerManagerIdent)
	}
	if !s.TrustControllers {
		add(CodeUntrustedControls, "%s is false: pods that controllers create from an annotated template are denied, so Deployments and Jobs never get pods (unless externalUsers/externalGroups admit the controllers)", KeyTrustControllers)
	}
	for _, l := range []struct {
		key      string
		patterns []string
	}{
		{KeySystemUsers, s.SystemUsers}, {KeyExternalUsers, s.ExternalUsers}, {KeyExternalGroups, s.ExternalGroups},
		{KeyProcessNamespaces, s.ProcessNamespaces}, {KeyBypassNamespaces, s.BypassNamespaces},
		{KeyLabelNamespaces, s.LabelNamespaces}, {KeyNoLabelNamespaces, s.NoLabelNamespaces},
	} {
		for _, p := range l.patterns {
			if !strings.HasPrefix(p, "^") && !strings.HasSuffix(p, "$") {
				add(CodeUnanchoredPattern, "%s: %q is unanchored, so it matches every name that contains it", l.key, p)
			}
			if strings.Count(p, "{") != strings.Count(p, "}") {
				add(CodeSplitPattern, "%s: %q looks cut at a comma: YuniKorn splits the list on every comma, even inside {m,n}; use alternation in one pattern", l.key, p)
			}
		}
	}
	add(CodeWorkloadUpdate, "YuniKorn checks user.info on Pod UPDATE only: whoever may update a Deployment (or another workload) can change its template's annotation, and the new pods inherit it")
	return out
}
