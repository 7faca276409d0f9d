package yunikorn

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// Placement follows YuniKorn's placement manager (pkg/scheduler/placement)
// and the partition's AddApplication: the rules in order, each rule's
// filter, name handling and parent chain, the ACL, leaf and draining checks
// of PlaceApplication, the root.default fallback, the recovery queue and
// the creation of dynamic queues. The decision is stateless: the optional
// state of the input says which dynamic queues exist or drain.

// The names of the rules YuniKorn builds.
const (
	RuleProvided = "provided"
	RuleUser     = "user"
	RuleTag      = "tag"
	RuleFixed    = "fixed"
	RuleRecovery = "recovery"
	RuleTest     = "test"
	// RuleDefault is the rule of the output for the root.default fallback.
	RuleDefault = "default"

	// DefaultQueue is YuniKorn's hard-coded fallback queue.
	DefaultQueue = "root.default"
	// DefaultClusterID is service.clusterId when the configuration has none.
	DefaultClusterID = "mycluster"

	// errNoRuleMatched is YuniKorn's placement.ErrorRejected.
	errNoRuleMatched = "application rejected: no placement rule matched"
	// panicNoDot is the runtime error of PlaceApplication's walk up a name
	// that no existing queue prefixes.
	panicNoDot = "runtime error: slice bounds out of range [:-1]"
	// tagCreateForce is the tag that forces an application.
	tagCreateForce = "application.create.force"
)

// PlacementRules is a partition's placement manager: the rules built from
// the configuration, the implicit recovery rule excluded. When a rule does
// not build, YuniKorn keeps a manager without rules: Err is set and Rules
// is empty, and every application is rejected.
type PlacementRules struct {
	Rules []*PlacementRuleSpec
	// Implicit is set when the configuration has no rules and the manager
	// runs YuniKorn's implicit provided rule.
	Implicit bool
	Err      error
}

// PlacementRuleSpec is one built rule: the name lower-cased, the value
// normalised as the rule keeps it, the filter compiled.
type PlacementRuleSpec struct {
	Name   string
	Create bool
	Filter PlacementFilter
	Parent *PlacementRuleSpec
	// Value is the tag name (tag) or the queue (fixed), lower-cased.
	Value string
	// Qualified is set for a fixed queue starting with "root" (no dot
	// required, as YuniKorn tests it).
	Qualified bool
}

// Chain returns the rule's parents from the innermost outwards, ending with
// the rule itself.
func (r *PlacementRuleSpec) Chain() []*PlacementRuleSpec {
	var out []*PlacementRuleSpec
	for n := r; n != nil; n = n.Parent {
		out = append([]*PlacementRuleSpec{n}, out...)
	}
	return out
}

// PlacementFilter is a compiled rule filter (YuniKorn's placement.Filter).
type PlacementFilter struct {
	Allow bool
	Empty bool
	Users map[string]bool
	// UserExp is the one-entry user regexp, as written; UserExpBad is set
	// when it does not compile (it then matches nobody).
	UserExp     string
	UserExpBad  bool
	Groups      map[string]bool
	GroupExp    string
	GroupExpBad bool

	userRE, groupRE *regexp.Regexp
}

// BuildPlacementRules builds a partition's rules as YuniKorn's buildRules
// does: no rules means one provided rule without create; the first rule that
// does not build leaves the manager without any rule.
func BuildPlacementRules(conf []PlacementRule) *PlacementRules {
	return BuildPlacementRulesAs(conf, release.Default())
}

// BuildPlacementRulesAs is BuildPlacementRules as release rel builds the
// rules.
func BuildPlacementRulesAs(conf []PlacementRule, rel release.Version) *PlacementRules {
	pr := &PlacementRules{}
	if len(conf) == 0 {
		conf = []PlacementRule{{Name: RuleProvided}}
		pr.Implicit = true
	}
	for i := range conf {
		r, err := buildPlacementRule(conf[i], rel)
		if err != nil {
			return &PlacementRules{Err: err, Implicit: pr.Implicit}
		}
		pr.Rules = append(pr.Rules, r)
	}
	return pr
}

// buildError is a rule YuniKorn's placement manager cannot build, with the
// code of the refusal it is.
type buildError struct{ code, msg string }

func (e buildError) Error() string { return e.msg }

func buildPlacementRule(conf PlacementRule, rel release.Version) (*PlacementRuleSpec, error) {
	r := &PlacementRuleSpec{Name: strings.ToLower(conf.Name), Create: conf.Create}
	switch r.Name {
	case RuleProvided, RuleUser, RuleTest:
	case RuleTag:
		r.Value = strings.ToLower(conf.Value)
		if r.Value == "" {
			return nil, buildError{CodeRuleTagMissing, "a tag queue rule must have a tag name set"}
		}
	case RuleFixed:
		r.Value = strings.ToLower(conf.Value)
		if r.Value == "" {
			return nil, buildError{CodeRuleFixedMissing, "a fixed queue rule must have a queue name set"}
		}
		// Releases with narrow names check the name only when they create
		// the queue.
		for _, part := range strings.Split(r.Value, ".") {
			if !rel.Has(release.NarrowQueueNames) && !QueueNameRegExp.MatchString(part) {
				return nil, buildError{CodeRuleFixedName, invalidQueueName}
			}
		}
		r.Qualified = strings.HasPrefix(r.Value, rootQueue)
		if r.Qualified && conf.Parent != nil {
			return nil, buildError{CodeRuleFixedQualifiedParent, fmt.Sprintf("cannot have a fixed queue rule with qualified queue getName and a parent rule: %s", ruleGoValue(conf))}
		}
	case RuleRecovery:
		if rel.Has(release.OldMessageWording) {
			return nil, buildError{CodeRuleRecovery, fmt.Sprintf("unknown rule name specified %s, failing placement rule config", conf.Name)}
		}
		return nil, buildError{CodeRuleRecovery, "recovery rule cannot be part of the config, failing placement rule config"}
	default:
		return nil, buildError{CodeRuleUnknown, fmt.Sprintf("unknown rule name specified %s, failing placement rule config", conf.Name)}
	}
	r.Filter = newPlacementFilter(conf.Filter, rel)
	if conf.Parent != nil {
		p, err := buildPlacementRule(*conf.Parent, rel)
		if err != nil {
			return nil, err
		}
		r.Parent = p
	}
	return r, nil
}

// ruleGoValue is Go's %v of YuniKorn's configs.PlacementRule (Name, Create,
// Filter, Parent, Value) with the parent pointer written 0x0: the address
// YuniKorn prints differs on every run.
func ruleGoValue(conf PlacementRule) string {
	return fmt.Sprintf("{%s %t {%s %v %v} 0x0 %s}", conf.Name, conf.Create, conf.Filter.Type,
		emptyIfNil(conf.Filter.Users), emptyIfNil(conf.Filter.Groups), conf.Value)
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NewPlacementFilter compiles a filter as YuniKorn's newFilter does. The
// type is compared case-sensitively: only "deny" denies. One entry with a
// regexp character is an unanchored regexp; one other entry is a name if it
// is valid; two or more entries are names and invalid ones are dropped.
func NewPlacementFilter(conf Filter) PlacementFilter {
	return newPlacementFilter(conf, release.Default())
}

func newPlacementFilter(conf Filter, rel release.Version) PlacementFilter {
	f := PlacementFilter{Allow: conf.Type != "deny", Empty: true, Users: map[string]bool{}, Groups: map[string]bool{}}
	if len(conf.Users) > 0 {
		f.Empty = false
		f.UserExp, f.UserExpBad, f.userRE = filterList(conf.Users, UserRegExpOf(rel), f.Users)
	}
	if len(conf.Groups) > 0 {
		f.Empty = false
		f.GroupExp, f.GroupExpBad, f.groupRE = filterList(conf.Groups, GroupRegExp, f.Groups)
	}
	return f
}

func filterList(entries []string, name *regexp.Regexp, into map[string]bool) (exp string, bad bool, re *regexp.Regexp) {
	if len(entries) == 1 && specialRegExp.MatchString(entries[0]) {
		re, err := regexp.Compile(entries[0])
		return entries[0], err != nil, re
	}
	for _, e := range entries {
		if name.MatchString(e) {
			into[e] = true
		}
	}
	return "", false, nil
}

// AllowUser is YuniKorn's Filter.allowUser: the user, then each group in
// order; a match answers the filter's type, no match its opposite.
func (f PlacementFilter) AllowUser(user string, groups []string) bool {
	if f.Empty {
		return f.Allow
	}
	if matchFilter(f.userRE, f.UserExp != "", f.Users, user) {
		return f.Allow
	}
	for _, g := range groups {
		if matchFilter(f.groupRE, f.GroupExp != "", f.Groups, g) {
			return f.Allow
		}
	}
	return !f.Allow
}

func matchFilter(re *regexp.Regexp, isExp bool, list map[string]bool, name string) bool {
	if isExp {
		return re != nil && re.MatchString(name)
	}
	return list[name]
}

// PlacementInput is the input of the yunikorn/queues/placement entry point.
type PlacementInput struct {
	Partition   string          `json:"partition,omitempty"`
	Application Application     `json:"application"`
	State       *PlacementState `json:"state,omitempty"`
}

// Application is what the shim submits to the core.
type Application struct {
	ID     string            `json:"id"`
	Queue  string            `json:"queue,omitempty"`
	User   string            `json:"user,omitempty"`
	Groups []string          `json:"groups,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
}

// PlacementState is the runtime state a stateless decision cannot see.
type PlacementState struct {
	Queues []StateQueue `json:"queues,omitempty"`
}

// StateQueue is a queue that exists at runtime: a dynamic queue (with its
// missing ancestors as dynamic parents), the recovery queue, or a draining
// queue.
type StateQueue struct {
	Path     string `json:"path"`
	Leaf     *bool  `json:"leaf,omitempty"`
	Draining bool   `json:"draining,omitempty"`
}

// Placement is the output of the yunikorn/queues/placement entry point.
type Placement struct {
	Allow   bool     `json:"allow"`
	Queue   string   `json:"queue,omitempty"`
	Rule    string   `json:"rule,omitempty"`
	Created *bool    `json:"created,omitempty"`
	Forced  bool     `json:"forced"`
	User    string   `json:"user,omitempty"`
	Groups  []string `json:"groups,omitempty"`
	// Stateful is set when the answer looked up a queue that the
	// configuration does not hold: a dynamic queue of an earlier
	// application, a draining queue or the recovery queue would change it.
	// The input's state says which exist; without it none does.
	Stateful bool   `json:"stateful,omitempty"`
	Message  string `json:"message,omitempty"`
	Panic    string `json:"panic,omitempty"`
	Reason   string `json:"reason"`
}

// PlaceJSON decodes a raw JSON input with the type rules the policy
// applies, then places. Malformed input is refused with the reason.
func (t *QueueTree) PlaceJSON(raw []byte, r builtins.GroupResolver) Placement {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return Placement{Reason: "invalid input: must be a JSON object"}
	}
	in, reason := PlacementInputFromMap(m)
	if reason != "" {
		return Placement{Reason: reason}
	}
	return t.Place(in, r)
}

// PlacementInputFromMap checks field types as the policy does, in the same
// order, and returns the typed input or the reason it is refused.
func PlacementInputFromMap(m map[string]any) (PlacementInput, string) {
	var in PlacementInput
	app, ok := m["application"].(map[string]any)
	if !ok {
		return in, "invalid input: application must be an object"
	}
	if in.Application.ID, ok = app["id"].(string); !ok {
		return in, "invalid input: application.id must be a string"
	}
	str := func(obj map[string]any, key string, into *string) bool {
		v, present := obj[key]
		if !present {
			return true
		}
		s, ok := v.(string)
		*into = s
		return ok
	}
	if !str(app, "queue", &in.Application.Queue) {
		return in, "invalid input: application.queue must be a string"
	}
	if !str(app, "user", &in.Application.User) {
		return in, "invalid input: application.user must be a string"
	}
	if v, present := app["groups"]; present {
		arr, isArr := v.([]any)
		if !isArr {
			return in, "invalid input: application.groups must be an array of strings"
		}
		for _, g := range arr {
			s, isStr := g.(string)
			if !isStr {
				return in, "invalid input: application.groups must be an array of strings"
			}
			in.Application.Groups = append(in.Application.Groups, s)
		}
	}
	if v, present := app["tags"]; present {
		obj, isObj := v.(map[string]any)
		if !isObj {
			return in, "invalid input: application.tags must be an object of strings"
		}
		in.Application.Tags = map[string]string{}
		for k, x := range obj {
			s, isStr := x.(string)
			if !isStr {
				return in, "invalid input: application.tags must be an object of strings"
			}
			in.Application.Tags[k] = s
		}
	}
	if !str(m, "partition", &in.Partition) {
		return in, "invalid input: partition must be a string"
	}
	if v, present := m["state"]; present {
		st, isObj := v.(map[string]any)
		if !isObj {
			return in, "invalid input: state must be an object"
		}
		in.State = &PlacementState{}
		if qv, present := st["queues"]; present {
			if reason := stateQueues(qv, in.State); reason != "" {
				return in, reason
			}
		}
	}
	return in, ""
}

// stateQueues reads state.queues, checking each field over every entry
// before the next field, as the policy does.
func stateQueues(v any, st *PlacementState) string {
	qs, isArr := v.([]any)
	var objs []map[string]any
	for _, x := range qs {
		q, isObj := x.(map[string]any)
		if !isObj {
			isArr = false
			break
		}
		objs = append(objs, q)
	}
	if !isArr {
		return "invalid input: state.queues must be an array of objects"
	}
	st.Queues = make([]StateQueue, len(objs))
	for i, q := range objs {
		path, ok := q["path"].(string)
		if !ok {
			return "invalid input: state.queues[].path must be a string"
		}
		st.Queues[i].Path = path
	}
	for i, q := range objs {
		if lv, present := q["leaf"]; present {
			b, ok := lv.(bool)
			if !ok {
				return "invalid input: state.queues[].leaf must be a boolean"
			}
			st.Queues[i].Leaf = &b
		}
	}
	for i, q := range objs {
		if dv, present := q["draining"]; present {
			b, ok := dv.(bool)
			if !ok {
				return "invalid input: state.queues[].draining must be a boolean"
			}
			st.Queues[i].Draining = b
		}
	}
	return ""
}

// ForcedTags is YuniKorn's IsAppCreationForced: the tag
// application.create.force, in any case, parsed by strconv.ParseBool.
func ForcedTags(tags map[string]string) bool {
	b, err := strconv.ParseBool(tagValue(tags, tagCreateForce))
	return err == nil && b
}

// tagValue is Application.GetTag: the first key equal to name under case
// folding. YuniKorn takes the first in Go's random map order; aclc takes the
// smallest key, so that every runtime answers the same.
func tagValue(tags map[string]string, name string) string {
	var keys []string
	for k := range tags {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return tags[keys[0]]
}

// partitionView is the queues of one partition as one placement sees them:
// the configured tree plus the input's state.
//
// The state's queues are kept as paths, not with every ancestor listed: the
// ancestors of a path of n parts are n prefixes, whose hashing costs the
// square of the path's length. A name's existing ancestors are found from
// the parts it shares with each state path instead, and configured ones no
// deeper than the partition's deepest queue.
type partitionView struct {
	p        *Partition
	dynamic  map[string]bool // path → leaf, for queues only the state declares
	paths    []string        // the state's paths, lower-cased, once each
	draining map[string]bool
	// stateful records that a lookup went beyond the configured queues.
	stateful bool
	// rel is the release the placement decides as.
	rel release.Version
}

func newPartitionView(p *Partition, st *PlacementState) *partitionView {
	v := &partitionView{p: p, dynamic: map[string]bool{}, draining: map[string]bool{}}
	if st == nil {
		return v
	}
	for _, q := range st.Queues {
		path := strings.ToLower(q.Path)
		if q.Draining {
			v.draining[path] = true
		}
		if _, seen := v.dynamic[path]; !seen {
			v.dynamic[path] = q.Leaf == nil || *q.Leaf
			v.paths = append(v.paths, path)
		}
	}
	return v
}

// configured reports a queue the configuration holds (the recovery queue
// BuildTree adds for the queue decision does not count).
func (v *partitionView) configured(path string) *Queue {
	if q := v.p.Queue(path); q != nil && !q.Added {
		return q
	}
	return nil
}

// stateParent reports a lower-cased path that is a missing ancestor of a
// state queue: a dynamic parent.
func (v *partitionView) stateParent(path string) bool {
	if path == "" {
		return false
	}
	for _, s := range v.paths {
		if len(s) > len(path) && s[len(path)] == '.' && strings.HasPrefix(s, path) {
			return true
		}
	}
	return false
}

// exists is the partition's getQueueInternal: the lower-cased path.
func (v *partitionView) exists(name string) bool {
	path := strings.ToLower(name)
	if v.configured(path) != nil {
		return true
	}
	v.stateful = true
	if _, ok := v.dynamic[path]; ok {
		return true
	}
	return v.stateParent(path)
}

// leaf must only be asked of a queue that exists: a queue with a child is
// never a leaf, whatever its state entry says.
func (v *partitionView) leaf(name string) bool {
	path := strings.ToLower(name)
	if q := v.configured(path); q != nil {
		return q.Leaf
	}
	if v.stateParent(path) {
		return false
	}
	return v.dynamic[path]
}

// nearest returns the longest proper prefix of name (split at dots, in the
// name's own case) that exists, and false when none does. It marks the view
// stateful as walking up from the name with exists would: when a prefix
// below the one found was asked, or the one found is not configured.
func (v *partitionView) nearest(name string) (string, bool) {
	parts := strings.Split(name, ".")
	n := len(parts)
	lower := make([]string, n)
	for i, part := range parts {
		lower[i] = strings.ToLower(part)
	}
	k := 0
	for i := 1; i <= min(n-1, v.p.Depth()); i++ {
		if v.configured(strings.Join(lower[:i], ".")) != nil {
			k = i
		}
	}
	configured := k
	for _, s := range v.paths {
		k = max(k, min(sharedParts(lower, s), n-1))
	}
	if n > 1 && (k < n-1 || k != configured) {
		v.stateful = true
	}
	if k == 0 {
		return "", false
	}
	return strings.Join(parts[:k], "."), true
}

// sharedParts counts the leading parts of a split name that path (not
// split) starts with.
func sharedParts(parts []string, path string) int {
	at := 0
	for i, part := range parts {
		end := at + len(part)
		if end > len(path) || path[at:end] != part || (end < len(path) && path[end] != '.') {
			return i
		}
		if end == len(path) {
			return i + 1
		}
		at = end + 1
	}
	return len(parts)
}

// submit is Queue.CheckSubmitAccess: never on the recovery queue, else the
// queue's ACLs, else the parent's check. Queues from the state have no ACLs,
// so the check starts no deeper than the deepest configured queue.
func (v *partitionView) submit(name, user string, groups []string) bool {
	parts := strings.Split(strings.ToLower(name), ".")
	for k := min(len(parts), v.p.Depth()); k > 0; k-- {
		path := strings.Join(parts[:k], ".")
		if path == RecoveryQueue {
			return false
		}
		if q := v.configured(path); q != nil {
			return submitCheck(q, user, groups).Allow
		}
	}
	return false
}

// ruleOutcome is what one rule run gives: a queue name, nothing, or an
// error that rejects. why is the outcome as the reason words it, with
// "parent: " for each parent level it came from.
type ruleOutcome struct {
	queue string
	why   string
	err   string
}

func ruleError(text string) ruleOutcome { return ruleOutcome{err: text, why: "error: " + text} }

// placeRule is the rule's placeApplication, nesting "parent: " in front of
// the outcome of the parent rule.
func (v *partitionView) placeRule(r *PlacementRuleSpec, app *Application, user string, groups []string) ruleOutcome {
	if r.Name == RuleTest {
		if app.Queue == "" {
			return ruleOutcome{queue: RuleTest}
		}
		// Releases with narrow names return the name unchecked: the
		// dot-less result then crashes the scheduler like any other.
		for _, part := range strings.Split(app.Queue, ".") {
			if v.checksNames() && !QueueNameRegExp.MatchString(part) {
				return ruleError(invalidQueueName)
			}
		}
		return ruleOutcome{queue: replaceDot(app.Queue)}
	}
	var name string
	switch r.Name {
	case RuleProvided:
		if name = app.Queue; name == "" {
			return ruleOutcome{why: "no queue requested"}
		}
	case RuleTag:
		if name = tagValue(app.Tags, r.Value); name == "" {
			return ruleOutcome{why: "tag " + r.Value + " not set"}
		}
	case RuleUser:
		name = user
	case RuleFixed:
		name = r.Value
	}
	if !r.Filter.AllowUser(user, groups) {
		return ruleOutcome{why: "filtered out"}
	}
	var queue string
	switch {
	case r.Name == RuleFixed && r.Qualified:
		queue = name
	case r.Name != RuleUser && r.Name != RuleFixed && strings.HasPrefix(name, "root."):
		for _, part := range strings.Split(name, ".") {
			if v.checksNames() && !QueueNameRegExp.MatchString(part) {
				return ruleError(invalidQueueName)
			}
		}
		queue = name
	default:
		child := name
		if r.Name != RuleFixed {
			child = replaceDot(name)
			if v.checksNames() && !QueueNameRegExp.MatchString(child) {
				return ruleError(invalidQueueName)
			}
		}
		parent := rootQueue
		if r.Parent != nil {
			po := v.placeRule(r.Parent, app, user, groups)
			switch {
			case po.err != "":
				return ruleOutcome{err: po.err, why: "parent: " + po.why}
			case po.queue == "":
				return ruleOutcome{why: "parent: " + po.why}
			}
			parent = po.queue
			if !strings.HasPrefix(parent, "root.") {
				parent = "root." + parent
			}
			if v.exists(parent) && v.leaf(parent) {
				return ruleError("parent rule returned a leaf queue: " + parent)
			}
		}
		queue = parent + "." + child
	}
	if !r.Create && !v.exists(queue) {
		return ruleOutcome{why: queue + " does not exist and create is false"}
	}
	return ruleOutcome{queue: queue}
}

// checksNames reports whether the rules validate the queue names they
// generate, which aborts the placement on an invalid one; releases with
// narrow names leave that to the creation of the queue.
func (v *partitionView) checksNames() bool { return !v.rel.Has(release.NarrowQueueNames) }

func replaceDot(name string) string { return strings.ReplaceAll(name, ".", "_dot_") }

// Place decides where YuniKorn puts the application, or why it rejects it.
func (t *QueueTree) Place(in PlacementInput, r builtins.GroupResolver) Placement {
	app := in.Application
	out := Placement{Forced: ForcedTags(app.Tags)}
	partition := NormalisePartitionName(in.Partition)
	reject := func(msg string, reasons ...string) Placement {
		out.Allow, out.Message, out.Reason = false, msg, strings.Join(reasons, "; ")
		return out
	}
	p := t.Partition(partition)
	if p == nil {
		return reject(fmt.Sprintf("Failed to add application %s to partition %s, partition doesn't exist", app.ID, t.partitionName(partition)),
			"partition "+partition+" does not exist")
	}
	user, groups, err := convertUGI(app.User, app.Groups, out.Forced, r, t.Release)
	if err != nil {
		return reject(err.Error(), "user: "+err.Error())
	}
	out.User, out.Groups = user, groups
	placeFailed := func(cause string, reasons []string) Placement {
		return reject(fmt.Sprintf("failed to place application %s: %s", app.ID, cause), reasons...)
	}
	rules := p.Placement
	if rules == nil {
		rules = BuildPlacementRules(nil)
	}
	if rules.Err != nil {
		return placeFailed(errNoRuleMatched, []string{"no placement rules: " + rules.Err.Error()})
	}
	v := newPartitionView(p, in.State)
	v.rel = t.Release
	var reasons []string
	note := func(label, outcome string) { reasons = append(reasons, label+": "+outcome) }
	queue, rule := "", ""
	// The configured rules, then the implicit recovery rule (last).
	for i := 0; i <= len(rules.Rules) && queue == ""; i++ {
		var o ruleOutcome
		var label string
		last := i == len(rules.Rules)
		if last {
			label, rule = RuleRecovery, RuleRecovery
			if out.Forced {
				o.queue = RecoveryQueue
			} else {
				o.why = "not forced"
			}
		} else {
			rs := rules.Rules[i]
			label, rule = "#"+strconv.Itoa(i)+" "+rs.Name, rs.Name
			if rules.Implicit {
				label += " (implicit)"
			}
			o = v.placeRule(rs, &app, user, groups)
		}
		if o.err != "" {
			note(label, o.why)
			out.Stateful = v.stateful
			return placeFailed(o.err, reasons)
		}
		if last && o.queue == "" {
			note(label, o.why)
			if t.Release.Has(release.NoDefaultQueueFallback) {
				break
			}
			label, rule = RuleDefault, RuleDefault
			if !v.exists(DefaultQueue) {
				note(label, DefaultQueue+" does not exist")
				break
			}
			o.queue = DefaultQueue
		}
		if o.queue == "" {
			note(label, o.why)
			continue
		}
		if o.queue == RecoveryQueue && out.Forced {
			queue = o.queue
			note(label, "placed in "+o.queue)
			break
		}
		if v.exists(o.queue) {
			switch {
			case !v.leaf(o.queue):
				note(label, o.queue+" is not a leaf")
			case !(rule == RuleDefault && t.Release.Has(release.DefaultQueueSkipsACL)) && !v.submit(o.queue, user, groups):
				// 1.5.2 runs its fallback as the recovery rule's, which
				// skips the ACL.
				note(label, "user "+user+" may not submit to "+o.queue)
			case v.draining[strings.ToLower(o.queue)] && !v.rel.Has(release.DrainingQueuesPlaced):
				note(label, o.queue+" is draining")
			default:
				queue = o.queue
				note(label, "placed in "+o.queue)
			}
			continue
		}
		// The nearest existing queue above; a name no existing queue
		// prefixes makes YuniKorn slice at index -1.
		current, ok := v.nearest(o.queue)
		if !ok {
			note(label, "panic: "+panicNoDot)
			out.Stateful = v.stateful
			out.Reason, out.Panic = strings.Join(reasons, "; "), panicNoDot
			return out
		}
		if !v.submit(current, user, groups) {
			note(label, "user "+user+" may not submit to "+strings.ToLower(current)+" (nearest existing queue above "+o.queue+")")
			continue
		}
		queue = o.queue
		note(label, "placed in "+o.queue)
	}
	if queue == "" {
		out.Stateful = v.stateful
		return placeFailed(errNoRuleMatched, reasons)
	}
	created := !v.exists(queue)
	out.Stateful = v.stateful
	if created {
		if cause := v.create(queue, user, groups); cause != "" {
			reasons = append(reasons, "creation failed: "+cause)
			msg := fmt.Sprintf("failed to create rule based queue %s for application %s", queue, app.ID)
			if !t.Release.Has(release.OldMessageWording) {
				msg += "\n" + cause
			}
			return reject(msg, reasons...)
		}
	} else if !v.leaf(queue) {
		return reject(fmt.Sprintf("failed to find queue %s for application %s", queue, app.ID), reasons...)
	}
	out.Allow, out.Queue, out.Rule, out.Created = true, strings.ToLower(queue), rule, &created
	out.Reason = strings.Join(reasons, "; ")
	return out
}

// create is the partition's createQueue for a missing queue, or the
// recovery queue; it returns the cause of a failure, or "". Names keep the
// case the rule produced, as YuniKorn's messages do.
func (v *partitionView) create(name, user string, groups []string) string {
	if strings.EqualFold(name, RecoveryQueue) {
		return ""
	}
	if !strings.HasPrefix(name, rootQueue) || !strings.Contains(name, ".") {
		return "illegal queue name passed in: " + name
	}
	current := name
	var toCreate []string // the missing levels, deepest first
	if !v.exists(name) {
		// "root." prefixes name, so root is found.
		current, _ = v.nearest(name)
		missing := strings.Split(name[len(current)+1:], ".")
		slices.Reverse(missing)
		toCreate = missing
	}
	if !v.submit(current, user, groups) {
		return fmt.Sprintf("submit access to queue %s denied during create of: %s", current, name)
	}
	if v.leaf(current) {
		return fmt.Sprintf("creation of queue %s failed parent is already a leaf: %s", name, current)
	}
	parent := strings.ToLower(current)
	for i := len(toCreate) - 1; i >= 0; i-- {
		part := toCreate[i]
		if !QueueNameRegExpOf(v.rel).MatchString(part) {
			return invalidQueueNameOf(v.rel, part)
		}
		if part == "@recovery@" {
			return "dynamic queue cannot be root.@recovery@"
		}
		// Only the first level is added to a queue that may drain: the
		// levels below it are new.
		if i == len(toCreate)-1 && v.draining[parent] {
			return "dynamic queue creation failed: \ncannot add a child queue when queue is marked for deletion: " + parent
		}
	}
	return ""
}

// partitionName is the partition as the RM proxy names it:
// [<clusterId>]<partition>.
func (t *QueueTree) partitionName(p string) string {
	id := t.ClusterID
	if id == "" {
		id = DefaultClusterID
	}
	return "[" + id + "]" + p
}
