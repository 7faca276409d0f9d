package yunikorn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// Placement diagnostic codes: behaviours of YuniKorn's placement that trap
// operators (spec yunikorn-placement.md §3.10).
const (
	CodeACLFallthrough    = "acl-fallthrough"
	CodeCreateBelowLeaf   = "create-below-leaf"
	CodeFilterTypeCase    = "filter-type-case"
	CodeFilterDenyEmpty   = "filter-deny-empty"
	CodeFilterUnanchored  = "filter-unanchored"
	CodeFilterDropped     = "filter-dropped"
	CodeFixedRootPrefix   = "fixed-root-prefix"
	CodeDefaultParent     = "default-parent"
	CodeRecoveryReachable = "recovery-reachable"
	CodeRuleNameCase      = "rule-name-case"
	CodeTagUnknown        = "tag-unknown"
	CodeTagInvalid        = "tag-invalid"
)

// shimTags are the tags the Kubernetes shim sets (spec §4.5), lower-cased as
// a tag rule keeps its value; shimTagsInvalid never make a queue name.
var (
	shimTags = map[string]bool{
		"namespace": true, "application.create.force": true, "imagepullsecrets": true,
		"yunikorn.apache.org/task-groups": true, "yunikorn.apache.org/schedulingpolicyparameters": true,
		"yunikorn.apache.org/creationtime": true, "namespace.parentqueue": true,
		"namespace.resourcequota": true, "namespace.resourceguaranteed": true, "namespace.resourcemaxapps": true,
	}
	shimTagsInvalid = map[string]bool{
		"namespace.resourcequota": true, "namespace.resourceguaranteed": true,
		"yunikorn.apache.org/task-groups": true, "yunikorn.apache.org/schedulingpolicyparameters": true,
	}
)

// namespaceTag is the tag the Kubernetes shim fills with the pod's
// namespace. A namespace name is a DNS-1123 label (lower-case letters,
// digits and '-'), so it has no dot and is never "@recovery@": a tag rule
// reading it can never yield root.@recovery@, whatever its parent.
const namespaceTag = "namespace"

func diagnosePlacement(p *Partition, add func(position, string, string)) {
	line := position{p.Line, p.Column}
	if d := p.Queue(DefaultQueue); d != nil && !d.Added && !d.Leaf {
		add(line, CodeDefaultParent, "root.default is a parent queue: the default fallback never applies")
	}
	if d := p.Queue(DefaultQueue); len(p.PlacementConfig) >= 2 || (d != nil && d.Leaf) {
		add(line, CodeACLFallthrough, "a user denied by a queue's ACLs is placed by a later rule or in root.default, not rejected")
	}
	hasLeaf := false
	for _, q := range p.Queues() {
		if q.Leaf && !q.Added && q.Parent != nil {
			hasLeaf = true
		}
	}
	for i := range p.PlacementConfig {
		top := &p.PlacementConfig[i]
		var chain []string
		for r := top; r != nil; r = r.Parent {
			chain = append([]string{r.Name}, chain...)
		}
		names := strings.Join(chain, "->")
		name := strings.ToLower(top.Name)
		if (name == RuleProvided || name == RuleTag) && top.Create {
			if hasLeaf {
				add(line, CodeCreateBelowLeaf, fmt.Sprintf("rule #%d (%s) can name a queue below a leaf; that application is rejected, later rules are not tried", i, names))
			}
			if !(name == RuleTag && strings.ToLower(top.Value) == namespaceTag) {
				add(line, CodeRecoveryReachable, fmt.Sprintf("rule #%d (%s) can place applications in root.@recovery@", i, names))
			}
		}
		if name == RuleFixed && top.Create && strings.EqualFold(top.Value, RecoveryQueue) {
			add(line, CodeRecoveryReachable, fmt.Sprintf("rule #%d (%s) can place applications in root.@recovery@", i, names))
		}
		for r := top; r != nil; r = r.Parent {
			diagnoseRule(i, r, line, add)
		}
	}
}

func diagnoseRule(i int, r *PlacementRule, line position, add func(position, string, string)) {
	if r.Name != strings.ToLower(r.Name) {
		add(line, CodeRuleNameCase, fmt.Sprintf("rule name %q is not lower case: the validator skips its path check", r.Name))
	}
	f := r.Filter
	if strings.EqualFold(f.Type, "deny") && f.Type != "deny" {
		add(line, CodeFilterTypeCase, fmt.Sprintf("filter type %q acts as \"allow\" at runtime", f.Type))
	}
	if f.Type == "deny" && len(f.Users) == 0 && len(f.Groups) == 0 {
		add(line, CodeFilterDenyEmpty, fmt.Sprintf("rule #%d never applies: deny filter without users or groups", i))
	}
	for _, l := range []struct {
		entries []string
		name    func(string) bool
	}{{f.Users, UserRegExp.MatchString}, {f.Groups, GroupRegExp.MatchString}} {
		if len(l.entries) == 1 && specialRegExp.MatchString(l.entries[0]) {
			re := l.entries[0]
			if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") {
				add(line, CodeFilterUnanchored, fmt.Sprintf("filter %q is unanchored and matches any name containing a match", re))
			}
		}
		if len(l.entries) >= 2 {
			var dropped []string
			for _, e := range l.entries {
				if !l.name(e) {
					dropped = append(dropped, e)
				}
			}
			if len(dropped) > 0 {
				add(line, CodeFilterDropped, fmt.Sprintf("filter entries %v are ignored", dropped))
			}
		}
	}
	v := strings.ToLower(r.Value)
	switch strings.ToLower(r.Name) {
	case RuleFixed:
		if strings.HasPrefix(v, rootQueue) && v != rootQueue && !strings.HasPrefix(v, rootQueue+".") {
			add(line, CodeFixedRootPrefix, fmt.Sprintf("fixed value %q starts with \"root\" but not \"root.\"", r.Value))
		}
	case RuleTag:
		switch {
		case v == "":
		case !shimTags[v]:
			add(line, CodeTagUnknown, fmt.Sprintf("tag %q is never set by the Kubernetes shim", r.Value))
		case shimTagsInvalid[v]:
			add(line, CodeTagInvalid, fmt.Sprintf("tag %q never yields a valid queue name", r.Value))
		}
	}
}

// Refusal is a configuration YuniKorn's validator and ConfigMap webhook
// accept but its scheduler cannot run as written (spec §1.8): placement
// rules that do not build, and rules that crash the scheduler.
type Refusal struct {
	// Code names the refusal, as an error's code names its rule.
	Code         string
	File         string
	Line, Column int
	Msg          string
	// Consequence says what YuniKorn does with it.
	Consequence string
}

func (r Refusal) String() string {
	return source.Located{Location: source.Location{File: r.File, Line: r.Line, Column: r.Column}, Msg: r.Msg}.String()
}

// What YuniKorn does with each kind of refusal.
const (
	consequenceRulesBuild = "YuniKorn's scheduler starts with no placement rule at all, so every application is rejected (application rejected: no placement rule matched); a reload with these rules is refused (New placement rules not activated, config reload failed)."
	consequencePanic      = "YuniKorn's scheduler panics (runtime error: slice bounds out of range [:-1]) when such a rule places an application, and restarts."
)

// Refusals lists what the scheduler cannot run in a configuration that
// loads: aclc check refuses it, and the decisions answer as the scheduler
// would at start-up.
func Refusals(t *QueueTree) []Refusal {
	var out []Refusal
	for _, p := range t.Partitions {
		if p.Placement != nil && p.Placement.Err != nil {
			code := CodeRuleUnknown
			var re buildError
			if errors.As(p.Placement.Err, &re) {
				code = re.code
			}
			out = append(out, Refusal{Code: code, File: t.File, Line: p.Line, Column: p.Column, Consequence: consequenceRulesBuild,
				Msg: fmt.Sprintf("partition %s: placement rules do not build: %v", p.Name, p.Placement.Err)})
			continue
		}
		for i := range p.PlacementConfig {
			for r := &p.PlacementConfig[i]; r != nil; r = r.Parent {
				name := strings.ToLower(r.Name)
				v := strings.ToLower(r.Value)
				switch {
				case name == RuleTest:
					out = append(out, Refusal{Code: CodeRuleTest, File: t.File, Line: p.Line, Column: p.Column, Consequence: consequencePanic,
						Msg: fmt.Sprintf("partition %s: rule #%d uses the test rule, which names a queue without a dot when no queue is given", p.Name, i)})
				case name == RuleFixed && r.Create && strings.HasPrefix(v, "root") && v != "root" && !strings.HasPrefix(v, "root."):
					out = append(out, Refusal{Code: CodeRuleFixedRootCreate, File: t.File, Line: p.Line, Column: p.Column, Consequence: consequencePanic,
						Msg: fmt.Sprintf("partition %s: rule #%d is fixed %q with create: it starts with \"root\" but not \"root.\", so YuniKorn takes it as qualified and finds no queue to create it under", p.Name, i, r.Value)})
				}
			}
		}
	}
	return out
}
