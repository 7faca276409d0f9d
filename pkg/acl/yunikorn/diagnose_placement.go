package yunikorn

import (
	"errors"
	"fmt"
	"regexp/syntax"
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
	CodeRuleNeverPlaces   = "rule-never-places"
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
	// root.default's own entry, where it is configured.
	defaultAt := line
	if d := p.Queue(DefaultQueue); d != nil && d.Config != nil && d.Config.Line > 0 {
		defaultAt = position{d.Config.Line, d.Config.Column}
	}
	if d := p.Queue(DefaultQueue); d != nil && !d.Added && !d.Leaf {
		add(defaultAt, CodeDefaultParent, "root.default is a parent queue: the default fallback never applies")
	}
	if d := p.Queue(DefaultQueue); len(p.PlacementConfig) >= 2 || (d != nil && d.Leaf) {
		// At the second rule, the first a denied user falls through to;
		// with one rule, at root.default.
		at := defaultAt
		if len(p.PlacementConfig) >= 2 {
			at = ruleAt(&p.PlacementConfig[1], line)
		}
		add(at, CodeACLFallthrough, "a user denied by a queue's ACLs is placed by a later rule or in root.default, not rejected")
	}
	pd := placementDiag{p: p}
	for _, q := range p.Queues() {
		if q.Leaf && !q.Added && q.Parent != nil {
			pd.hasLeaf = true
		}
	}
	var specs []*PlacementRuleSpec
	if p.Placement != nil && p.Placement.Err == nil && !p.Placement.Implicit && len(p.Placement.Rules) == len(p.PlacementConfig) {
		specs = p.Placement.Rules
	}
	for i := range p.PlacementConfig {
		top := &p.PlacementConfig[i]
		at := ruleAt(top, line)
		var chain []string
		for r := top; r != nil; r = r.Parent {
			chain = append([]string{r.Name}, chain...)
		}
		names := strings.Join(chain, "->")
		name := strings.ToLower(top.Name)
		if (name == RuleProvided || name == RuleTag) && top.Create {
			if pd.canBeBelowLeaf(top) {
				add(at, CodeCreateBelowLeaf, fmt.Sprintf("rule #%d (%s) can name a queue below a leaf; that application is rejected, later rules are not tried", i, names))
			}
			if !(name == RuleTag && strings.ToLower(top.Value) == namespaceTag) {
				add(at, CodeRecoveryReachable, fmt.Sprintf("rule #%d (%s) can place applications in root.@recovery@", i, names))
			}
		}
		if name == RuleFixed && top.Create && strings.EqualFold(top.Value, RecoveryQueue) {
			add(at, CodeRecoveryReachable, fmt.Sprintf("rule #%d (%s) can place applications in root.@recovery@", i, names))
		}
		if specs != nil {
			if where, why, ok := pd.neverPlaces(top, specs[i], line); ok {
				add(where, CodeRuleNeverPlaces, fmt.Sprintf("rule #%d (%s) never places an application: %s", i, names, why))
			}
		}
		for r := top; r != nil; r = r.Parent {
			diagnoseRule(i, r, ruleAt(r, line), add)
		}
	}
}

// ruleAt is where a diagnostic about rule r points: the rule's entry, or
// the partition when the rule's position is unknown.
func ruleAt(r *PlacementRule, partition position) position {
	if r.Line > 0 {
		return position{r.Line, r.Column}
	}
	return partition
}

// filterAt is where a diagnostic about rule r's filter points.
func filterAt(r *PlacementRule, partition position) position {
	if r.Filter.Line > 0 {
		return position{r.Filter.Line, r.Filter.Column}
	}
	return ruleAt(r, partition)
}

// placementDiag answers what the rules of one partition can name, from the
// configured queues (a freshly started partition) and the rules themselves.
type placementDiag struct {
	p       *Partition
	hasLeaf bool // a configured queue below root is a leaf
}

// configured is the configured queue at path, nil when there is none.
func (d placementDiag) configured(path string) *Queue {
	if q := d.p.Queue(path); q != nil && !q.Added {
		return q
	}
	return nil
}

// fixedPath is the queue a rule always names when it and its parents are
// all fixed rules, as YuniKorn builds the name (lower-cased; a parent result
// not starting with "root." gets "root." in front). ok is false for a rule
// with a dynamic part, and for a value starting with "root" but not "root."
// (fixed-root-prefix: it never matches or is refused).
func fixedPath(r *PlacementRule) (string, bool) {
	if strings.ToLower(r.Name) != RuleFixed {
		return "", false
	}
	v := strings.ToLower(r.Value)
	if strings.HasPrefix(v, rootQueue) {
		return v, v == rootQueue || strings.HasPrefix(v, rootQueue+".")
	}
	parent := rootQueue
	if r.Parent != nil {
		pp, ok := fixedPath(r.Parent)
		if !ok {
			return "", false
		}
		if !strings.HasPrefix(pp, rootQueue+".") {
			pp = rootQueue + "." + pp
		}
		parent = pp
	}
	return parent + "." + v, true
}

// qualifiable reports whether a rule can read a fully qualified name
// ("root.…"), which goes anywhere and skips the rule's parent: a submitted
// queue or a tag other than the namespace (a DNS label, never qualified).
func qualifiable(r *PlacementRule) bool {
	switch strings.ToLower(r.Name) {
	case RuleProvided:
		return true
	case RuleTag:
		return strings.ToLower(r.Value) != namespaceTag
	}
	return false
}

// belowLeaf reports whether path does not exist and its deepest existing
// ancestor is a configured leaf: creating it fails.
func (d placementDiag) belowLeaf(path string) bool {
	if d.configured(path) != nil {
		return false
	}
	for cut := strings.LastIndexByte(path, '.'); cut > 0; cut = strings.LastIndexByte(path[:cut], '.') {
		if q := d.configured(path[:cut]); q != nil {
			return q.Leaf
		}
	}
	return false
}

// canBeBelowLeaf reports whether a name rule r produces can be a queue that
// does not exist below a configured leaf. A parent that names an existing
// leaf is an error, not a name below it; a parent that names a queue that
// does not exist returns nothing unless it has create.
func (d placementDiag) canBeBelowLeaf(r *PlacementRule) bool {
	if path, ok := fixedPath(r); ok {
		return d.belowLeaf(path)
	}
	if qualifiable(r) && d.hasLeaf {
		return true
	}
	if strings.ToLower(r.Name) == RuleFixed && strings.Contains(r.Value, ".") && d.hasLeaf {
		// a dotted value below a dynamic parent: <parent>.a.b, where
		// <parent>.a may be a leaf.
		return true
	}
	// root.<name>, or <parent>.<name>: below a leaf only when the parent's
	// name is.
	return r.Parent != nil && r.Parent.Create && d.canBeBelowLeaf(r.Parent)
}

// mayBeCreated reports whether some rule of the partition with create can
// name path or a queue below it, which creates path at run time. It errs
// on the side of yes: a rule that can read a qualified name can create
// anything.
func (d placementDiag) mayBeCreated(path string) bool {
	for i := range d.p.PlacementConfig {
		if top := &d.p.PlacementConfig[i]; top.Create && d.canName(top, path, false) {
			return true
		}
	}
	return false
}

// canName reports whether rule r can yield path (exact), or path or a
// queue below it, with a name that is used: a fixed name that does not
// exist is used only with create. A dynamic part can be any one part.
func (d placementDiag) canName(r *PlacementRule, path string, exact bool) bool {
	if fp, ok := fixedPath(r); ok {
		return (fp == path || (!exact && strings.HasPrefix(fp, path+"."))) && (r.Create || d.configured(fp) != nil)
	}
	if qualifiable(r) {
		return true
	}
	name := strings.ToLower(r.Name)
	if name == RuleFixed && strings.HasPrefix(strings.ToLower(r.Value), rootQueue) {
		return false // root<x>: refused, or never matches
	}
	if r.Parent == nil {
		return strings.Count(path, ".") == 1 // root.<one part>
	}
	// <parent>.<tail>: the tail is one part, or a fixed value's parts.
	tail := 1
	if name == RuleFixed {
		tail = strings.Count(r.Value, ".") + 1
	}
	if !exact && d.canName(r.Parent, path, false) {
		return true
	}
	parts := strings.Split(path, ".")
	for j := 1; j <= tail && j < len(parts); j++ {
		if exact && j < tail {
			continue // exactly path: the whole value ends it
		}
		if name == RuleFixed && strings.Join(parts[len(parts)-j:], ".") != strings.Join(strings.Split(strings.ToLower(r.Value), ".")[:j], ".") {
			continue
		}
		if d.canName(r.Parent, strings.Join(parts[:len(parts)-j], "."), true) {
			return true
		}
	}
	return false
}

// neverPlaces finds why a rule that builds can never place an
// application: a filter every user fails, or a fixed queue or parent that
// cannot be used, on a part of the rule every application reaching the rule
// reaches (a qualified name skips the parents). at is where it is written.
func (d placementDiag) neverPlaces(top *PlacementRule, spec *PlacementRuleSpec, partition position) (at position, why string, ok bool) {
	r, s := top, spec
	for depth := 0; r != nil && s != nil; depth, r, s = depth+1, r.Parent, s.Parent {
		what := "the rule"
		if depth > 0 {
			what = "its parent " + r.Name
		}
		if how := excludesEveryone(s.Filter); how != "" {
			return filterAt(r, partition), fmt.Sprintf("the filter of %s %s", strings.TrimPrefix(what, "its "), how), true
		}
		if path, static := fixedPath(r); static {
			q := d.configured(path)
			switch {
			case q == nil && !r.Create && !d.mayBeCreated(path):
				return ruleAt(r, partition), fmt.Sprintf("%s names %s, which does not exist, has create false, and no rule with create names it or a queue below it", what, path), true
			case q != nil && depth == 0 && !q.Leaf:
				return ruleAt(r, partition), fmt.Sprintf("%s names %s, a parent queue: applications are placed in leaves only, so the next rule is tried", what, path), true
			case q != nil && depth > 0 && q.Leaf:
				return ruleAt(r, partition), fmt.Sprintf("%s names %s, a leaf queue: every application it reaches is rejected (parent rule returned a leaf queue), later rules are not tried", what, path), true
			}
			return position{}, "", false // the rest of the chain is this static name
		}
		if qualifiable(r) {
			return position{}, "", false // a qualified name skips the parents
		}
	}
	return position{}, "", false
}

// excludesEveryone says how a filter keeps every user out, "" when it
// does not: an allow filter whose entries are all ignored admits nobody; a
// deny filter whose one user pattern matches every user name denies
// everybody. (A deny filter without entries is filter-deny-empty.)
func excludesEveryone(f PlacementFilter) string {
	if f.Empty {
		return ""
	}
	if f.Allow && len(f.Users) == 0 && len(f.Groups) == 0 && (f.UserExp == "" || f.UserExpBad) && (f.GroupExp == "" || f.GroupExpBad) {
		return "admits nobody: every entry of its lists is ignored"
	}
	if !f.Allow && f.UserExp != "" && !f.UserExpBad && matchesEveryName(f.UserExp) {
		return fmt.Sprintf("denies everybody: its user pattern %q matches every user name", f.UserExp)
	}
	return ""
}

// matchesEveryName reports whether a regexp, matched unanchored as a
// filter matches, matches every non-empty name: after its anchors it is
// nothing or one repetition of any character (a newline included when both
// ends are anchored).
func matchesEveryName(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	re = re.Simplify()
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	start, end := false, false
	for len(parts) > 0 && (parts[0].Op == syntax.OpBeginText || parts[0].Op == syntax.OpBeginLine) {
		start, parts = true, parts[1:]
	}
	for len(parts) > 0 && (parts[len(parts)-1].Op == syntax.OpEndText || parts[len(parts)-1].Op == syntax.OpEndLine) {
		end, parts = true, parts[:len(parts)-1]
	}
	switch {
	case len(parts) == 0:
		return !(start && end)
	case len(parts) > 1:
		return false
	}
	x := parts[0]
	for x.Op == syntax.OpCapture {
		x = x.Sub[0]
	}
	switch x.Op {
	case syntax.OpStar, syntax.OpQuest:
		if !(start && end) {
			return true // the empty match at one end
		}
		return x.Op == syntax.OpStar && x.Sub[0].Op == syntax.OpAnyChar
	case syntax.OpPlus:
		return x.Sub[0].Op == syntax.OpAnyChar
	}
	return false
}

func diagnoseRule(i int, r *PlacementRule, line position, add func(position, string, string)) {
	filterLine := line
	if r.Filter.Line > 0 {
		filterLine = position{r.Filter.Line, r.Filter.Column}
	}
	if r.Name != strings.ToLower(r.Name) {
		add(line, CodeRuleNameCase, fmt.Sprintf("rule name %q is not lower case: the validator skips its path check", r.Name))
	}
	f := r.Filter
	if strings.EqualFold(f.Type, "deny") && f.Type != "deny" {
		add(filterLine, CodeFilterTypeCase, fmt.Sprintf("filter type %q acts as \"allow\" at runtime", f.Type))
	}
	if f.Type == "deny" && len(f.Users) == 0 && len(f.Groups) == 0 {
		add(filterLine, CodeFilterDenyEmpty, fmt.Sprintf("rule #%d never applies: deny filter without users or groups", i))
	}
	for _, l := range []struct {
		entries []string
		name    func(string) bool
	}{{f.Users, UserRegExp.MatchString}, {f.Groups, GroupRegExp.MatchString}} {
		if len(l.entries) == 1 && specialRegExp.MatchString(l.entries[0]) {
			re := l.entries[0]
			if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") {
				add(filterLine, CodeFilterUnanchored, fmt.Sprintf("filter %q is unanchored and matches any name containing a match", re))
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
				add(filterLine, CodeFilterDropped, fmt.Sprintf("filter entries %v are ignored", dropped))
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
