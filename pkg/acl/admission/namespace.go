package admission

import (
	"regexp"
	"slices"
)

// Namespace annotations that override the namespace filters (spec §5).
const (
	AnnotationEnableYuniKorn = "yunikorn.apache.org/namespace.enableYuniKorn"
	AnnotationGenerateAppID  = "yunikorn.apache.org/namespace.generateAppId"
)

// Namespace is a namespace as kube-mgmt replicates it into
// data.kubernetes.namespaces[name]; only its annotations matter.
type Namespace struct {
	Name        string
	Annotations map[string]string
}

// triState is YuniKorn's reading of a namespace annotation.
type triState int

const (
	unset triState = iota
	isFalse
	isTrue
)

// flag reads a namespace annotation as YuniKorn's namespace cache does: a
// namespace that is not known, or has no such annotation, is unset; exactly
// "true" is true; any other value, "True" and "" included, is false. The
// map key is the namespace name, as the cache is keyed by it.
func flag(namespaces map[string]Namespace, ns, annotation string) triState {
	n, ok := namespaces[ns]
	if !ok {
		return unset
	}
	v, ok := n.Annotations[annotation]
	switch {
	case !ok:
		return unset
	case v == "true":
		return isTrue
	}
	return isFalse
}

// ShouldProcessNamespace reports whether pods in ns are YuniKorn's (spec
// §5): the enableYuniKorn annotation when set, else a processNamespaces
// match (an empty list matches all) and no bypassNamespaces match.
func (s *Settings) ShouldProcessNamespace(ns string, namespaces map[string]Namespace) bool {
	s = s.settings()
	if f := flag(namespaces, ns, AnnotationEnableYuniKorn); f != unset {
		return f == isTrue
	}
	return (len(s.processNamespaces) == 0 || anyMatch(s.processNamespaces, ns)) && !anyMatch(s.bypassNamespaces, ns)
}

// ShouldLabelNamespace reports whether pods in ns get app-id labels (spec
// §5): the generateAppId annotation when set, else a labelNamespaces match
// (an empty list matches all) and no noLabelNamespaces match. It also gates
// user.info on workload CREATE and pod UPDATE.
func (s *Settings) ShouldLabelNamespace(ns string, namespaces map[string]Namespace) bool {
	s = s.settings()
	if f := flag(namespaces, ns, AnnotationGenerateAppID); f != unset {
		return f == isTrue
	}
	return (len(s.labelNamespaces) == 0 || anyMatch(s.labelNamespaces, ns)) && !anyMatch(s.noLabelNamespaces, ns)
}

// exactName is a bypassNamespaces pattern that names one namespace.
var exactName = regexp.MustCompile(`^\^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\$$`)

// NamedBypassed returns the namespaces a bypassNamespaces pattern names
// exactly (^name$) and that the filters bypass, whatever else they
// process: the ones a namespaceSelector can leave out without changing a
// decision, but for a namespace annotated enableYuniKorn=true, which no
// label selector sees.
func (s *Settings) NamedBypassed() []string {
	s = s.settings()
	var out []string
	for _, p := range s.BypassNamespaces {
		if m := exactName.FindStringSubmatch(p); m != nil && !s.ShouldProcessNamespace(m[1], nil) && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}
