package admission

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	srcerr "github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// Diagnostic is a warning about settings YuniKorn accepts but that probably
// do not do what their author meant (spec §11). Settings read from a
// configuration locate it at the key it is about, or at the first
// admission key written when it is about no key the configuration sets.
type Diagnostic = srcerr.Diagnostic

// Diagnostic codes.
const (
	CodeFallback          = "fallback"
	CodeBypassAuth        = "bypass-auth"
	CodeNoSystemUsers     = "no-system-users"
	CodeUntrustedControls = "controllers-untrusted"
	CodeUnanchoredPattern = "unanchored-pattern"
	CodeWorkloadUpdate    = "workload-update-unchecked"
	CodeSplitPattern      = "pattern-split-at-comma"
	CodeControllerManager = "controller-manager-not-trusted"
	// CodeMatchesEveryone: a pattern that also matches the empty string
	// (an empty alternative, x*) matches every name.
	CodeMatchesEveryone = "pattern-matches-everyone"
	// CodeAlternationAnchors: ^ and $ bind to one alternative each.
	CodeAlternationAnchors = "alternation-anchors"
	// CodePartialAnchor: anchored at one end only.
	CodePartialAnchor = "partially-anchored-pattern"
	// CodeUncheckedWorkloads: workloads created where the filters do not
	// process keep a pre-set user.info unchecked.
	CodeUncheckedWorkloads = "unchecked-namespaces"
	// CodeUsernameLabel: the release's scheduler takes the username label
	// as the user of a pod without user.info.
	CodeUsernameLabel = "username-label"
	// CodePodUpdate: a changed user.info is let through on some pod UPDATEs.
	CodePodUpdate = "pod-update-unchecked"
	// CodeReplicationControllers: ReplicationControllers are never checked.
	CodeReplicationControllers = "replication-controllers-unchecked"
	// CodeSystemUsersBeyondKubeSystem: a trusted systemUsers pattern matches
	// service accounts outside kube-system.
	CodeSystemUsersBeyondKubeSystem = "system-users-beyond-kube-system"
	// CodeGroupOfEveryone: an externalGroups pattern matches a group every
	// authenticated user, or every service account, has.
	CodeGroupOfEveryone = "external-group-of-everyone"
	// CodeUserInfoReplaced: the release's admission controller replaces
	// the user.info it adds to pods of namespaces it processes but does
	// not label.
	CodeUserInfoReplaced   = "user-info-replaced"
	controllerManagerIdent = "system:kube-controller-manager"
)

// guardFix is what every warning about a way around YuniKorn's check says
// to do.
const guardFix = "aclc's guard refuses it (aclc webhook, or the policies of aclc build --target kubernetes or gatekeeper; docs/GUARD.md)"

// Names only a hole lets through: a service account outside kube-system,
// and the groups the API server gives every authenticated user or every
// service account.
var (
	outsideServiceAccount = "system:serviceaccount:default:default"
	everyoneGroups        = []string{"system:authenticated", "system:serviceaccounts"}
)

// Diagnose returns the traps of the settings; fallbacks come first.
func (s *Settings) Diagnose() []Diagnostic {
	s = s.settings()
	var out []Diagnostic
	// key is the setting a warning is about, "" for none.
	add := func(key, code, format string, a ...any) {
		loc := s.at(key)
		out = append(out, Diagnostic{File: loc.File, Line: loc.Line, Column: loc.Column, Code: code, Msg: fmt.Sprintf(format, a...)})
	}
	for _, f := range s.Fallbacks {
		add(f.Key, CodeFallback, "%s (YuniKorn logs an error and uses the default; the ConfigMap is never rejected)", f)
	}
	if s.BypassAuth {
		add(KeyBypassAuth, CodeBypassAuth, "%s is true: user.info is never added, and a pre-set value is kept unchecked, so anyone may claim any identity (Pod UPDATE protection stays on); set it to false", KeyBypassAuth)
	}
	if s.TrustControllers && s.isSystemUser(outsideServiceAccount) {
		add(KeySystemUsers, CodeSystemUsersBeyondKubeSystem, "%s matches %s: whoever may run a pod, or get a token, as a service account outside kube-system may set user.info to any identity; anchor the patterns, e.g. ^system:serviceaccount:kube-system:", KeySystemUsers, outsideServiceAccount)
	}
	for _, g := range everyoneGroups {
		if anyMatch(s.externalGroups, g) {
			add(KeyExternalGroups, CodeGroupOfEveryone, "%s matches %s, a group the API server gives every %s: all of them may set user.info to any identity; name the groups that may, each as ^group$", KeyExternalGroups, g,
				map[string]string{"system:authenticated": "authenticated user", "system:serviceaccounts": "service account"}[g])
			break
		}
	}
	if len(s.SystemUsers) == 0 {
		add(KeySystemUsers, CodeNoSystemUsers, "%s is empty: no controller is trusted and the ReplicaSet skip is off, so the ReplicaSets deployment-controller creates with an inherited annotation are denied", KeySystemUsers)
	} else if !s.isSystemUser(controllerManagerIdent) {
		add(KeySystemUsers, CodeControllerManager, "%s does not match %s, the identity of controllers that run without per-controller service accounts", KeySystemUsers, controllerManagerIdent)
	}
	if !s.TrustControllers {
		add(KeyTrustControllers, CodeUntrustedControls, "%s is false: pods that controllers create from an annotated template are denied, so Deployments and Jobs never get pods (unless externalUsers/externalGroups admit the controllers)", KeyTrustControllers)
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
			if code, msg := patternTrap(p); code != "" {
				add(l.key, code, "%s: %s", l.key, msg)
			}
			if strings.Count(p, "{") != strings.Count(p, "}") {
				add(l.key, CodeSplitPattern, "%s: %q looks cut at a comma: YuniKorn splits the list on every comma, even inside {m,n}; use alternation in one pattern", l.key, p)
			}
		}
	}
	for _, l := range []struct {
		key      string
		patterns []string
		what     string
	}{
		{KeyProcessNamespaces, s.ProcessNamespaces, "do not match"},
		{KeyBypassNamespaces, s.BypassNamespaces, "match"},
		{KeyNoLabelNamespaces, s.NoLabelNamespaces, "match"},
	} {
		if len(l.patterns) == 0 || (l.key == KeyBypassNamespaces && slices.Equal(l.patterns, []string{defaultBypassNamespaces})) {
			continue
		}
		add(l.key, CodeUncheckedWorkloads, "workloads (Deployments, Jobs, ...) created in namespaces that %s %s are not checked: a forged user.info in their pod template is kept, and the trusted controllers then create pods with it (YuniKorn checks user.info on a Pod CREATE in every namespace, on a workload CREATE only in the namespaces its filters process)", l.what, l.key)
	}
	add("", CodeWorkloadUpdate, "YuniKorn checks user.info on Pod UPDATE only: whoever may update a Deployment (or another workload) can change its template's annotation, and the new pods inherit it; "+guardFix)
	add("", CodePodUpdate, "YuniKorn lets a pod UPDATE change user.info when the new pod is labelled app=yunikorn, in a namespace it does not process or label, and on the pods/status subresource: the scheduler then runs the pod as the new user; "+guardFix)
	add("", CodeReplicationControllers, "YuniKorn never checks ReplicationControllers: a forged user.info in their pod template is kept, and the replication controller, a trusted system user, creates pods with it; "+guardFix)
	if s.release.Has(release.IgnoreApplicationAnnotation) {
		for _, l := range []struct {
			key      string
			patterns []string
			which    string
		}{
			{KeyLabelNamespaces, s.LabelNamespaces, "do not match"},
			{KeyNoLabelNamespaces, s.NoLabelNamespaces, "match"},
		} {
			if len(l.patterns) == 0 {
				continue
			}
			add(l.key, CodeUserInfoReplaced, "YuniKorn %s does not label the pods of processed namespaces that %s %s, and its patch for such a pod ends by writing the pod's own annotations and yunikorn.apache.org/ignore-application, which replaces the user.info it adds: the pod runs as its yunikorn.apache.org/username label's user, or nobody, and is placed by that user's ACLs; label every processed namespace, or keep the user.info with aclc's guard (docs/GUARD.md)", s.release.Name(), l.which, l.key)
		}
	}
	if s.release.Has(release.UsernameLabel) {
		add("", CodeUsernameLabel, "YuniKorn %s takes the pod label yunikorn.apache.org/username as the user of a pod without user.info (one labelled app=yunikorn, or outside the namespaces it processes, gets none): anyone who may create pods can run one as any user; %s", s.release.Name(), guardFix)
	}
	return out
}

// patternTrap says how a pattern matches more names than it seems to:
// YuniKorn matches each pattern unanchored (regexp.MatchString), so only
// ^ and $ around the whole pattern make it exact. The pattern is read with
// Go's parser, as YuniKorn reads it; capture groups are looked through.
func patternTrap(p string) (code, msg string) {
	re, err := regexp.Compile(p)
	if err != nil {
		return "", "" // reported as a fallback
	}
	if re.MatchString("") && re.MatchString("any-name-at-all") {
		return CodeMatchesEveryone, fmt.Sprintf("%q also matches the empty string (an empty alternative, or a repetition that may be empty), so it matches every name", p)
	}
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", ""
	}
	tree = unwrapCaptures(tree.Simplify())
	start, end := anchoredAt(tree, true), anchoredAt(tree, false)
	switch {
	case start && end:
		return "", ""
	case tree.Op == syntax.OpAlternate && (anyAnchored(tree, true) || anyAnchored(tree, false)):
		return CodeAlternationAnchors, fmt.Sprintf("%q: ^ and $ bind to one alternative each, not to the whole list, so some alternatives match inside longer names; write ^(a|b)$", p)
	case !start && !end:
		return CodeUnanchoredPattern, fmt.Sprintf("%q is unanchored, so it matches every name that contains it", p)
	case start && strings.HasSuffix(p, ":"):
		// ^system:serviceaccount:<namespace>: is the documented way of
		// naming every service account of a namespace.
		return "", ""
	case start:
		return CodePartialAnchor, fmt.Sprintf("%q has no $, so it matches every name that starts with it (e.g. %q); end it with $", p, strings.TrimPrefix(p, "^")+"-but-not-really")
	default:
		return CodePartialAnchor, fmt.Sprintf("%q has no ^, so it matches every name that ends with it; start it with ^", p)
	}
}

// unwrapCaptures looks through capture groups: (?<u>^x$) is anchored.
func unwrapCaptures(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re
}

// anchoredAt reports whether every way through re starts with ^ (start)
// or ends with $ (!start).
func anchoredAt(re *syntax.Regexp, start bool) bool {
	re = unwrapCaptures(re)
	switch re.Op {
	case syntax.OpBeginText:
		return start
	case syntax.OpEndText:
		return !start
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return false
		}
		if start {
			return anchoredAt(re.Sub[0], true)
		}
		return anchoredAt(re.Sub[len(re.Sub)-1], false)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !anchoredAt(s, start) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

func anyAnchored(re *syntax.Regexp, start bool) bool {
	for _, s := range re.Sub {
		if anchoredAt(s, start) {
			return true
		}
	}
	return false
}
