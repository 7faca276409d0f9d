package yunikorn

import "strings"

// PlacementReads is what a stateless placement of one application may read
// of the configuration besides the application's queue, user and tags:
// which groups the decision depends on, and where. aclc diff derives its
// group combinations from it (see docs/DIFF.md).
type PlacementReads struct {
	// Queues are the queues whose existence, kind or ACL chain the
	// placement may read: the queue each rule and parent rule names (or,
	// when that queue is not configured, the deepest configured queue
	// above it) and root.default. Lower-cased.
	Queues []string
	// Filters are the filters of every rule and parent rule, in order.
	Filters []PlacementFilter
	// UserParents are the queues a user rule (or parent rule) would place a user below:
	// whether the user's queue exists depends on the user's name.
	UserParents []string
}

// Reads returns what a placement of app in the partition may read. The
// filters are what make the answer depend on the groups: with every filter
// passing, each rule names one queue whatever the groups, so the queues
// found are every queue a submit check can start at.
//
// It is the reads of each rule (RuleReads) in order, every queue listed
// once, then root.default.
func (t *QueueTree) Reads(partition string, app Application) PlacementReads {
	v, rules := t.readsView(partition)
	if v == nil {
		return PlacementReads{}
	}
	r := readsOf{v: v, seen: map[string]bool{}}
	for _, rule := range rules {
		r.rule(rule, &app)
	}
	r.queue(DefaultQueue)
	return r.out
}

// ReadRules is how many rules Reads goes through in the partition (its
// rules, or YuniKorn's default rule when it has none).
func (t *QueueTree) ReadRules(partition string) int {
	return len(t.readRules(partition))
}

// RuleReads is what rule i of ReadRules, with its parent rules, reads of
// the configuration for app, as Reads finds it (root.default left out).
func (t *QueueTree) RuleReads(partition string, i int, app Application) PlacementReads {
	v, rules := t.readsView(partition)
	if v == nil || i < 0 || i >= len(rules) {
		return PlacementReads{}
	}
	r := readsOf{v: v, seen: map[string]bool{}}
	r.rule(rules[i], &app)
	return r.out
}

// DefaultReads is what Reads adds after the rules: root.default, or the
// configured queue YuniKorn would create it under.
func (t *QueueTree) DefaultReads(partition string) PlacementReads {
	v, _ := t.readsView(partition)
	if v == nil {
		return PlacementReads{}
	}
	r := readsOf{v: v, seen: map[string]bool{}}
	r.queue(DefaultQueue)
	return r.out
}

// RuleInput is the part of app that rule i of ReadRules (with its parent
// rules) reads when RuleReads places it: the requested queue, the tags it
// names, the user. Two applications with one RuleInput have the same
// RuleReads, since the filters are let through and the groups not read.
func (t *QueueTree) RuleInput(partition string, i int, app Application) string {
	rules := t.readRules(partition)
	if i < 0 || i >= len(rules) {
		return ""
	}
	var b strings.Builder
	for _, n := range rules[i].Chain() {
		switch n.Name {
		case RuleProvided, RuleTest:
			b.WriteString("q:" + app.Queue)
		case RuleTag:
			b.WriteString("t:" + tagValue(app.Tags, n.Value))
		case RuleUser:
			b.WriteString("u:" + app.User)
		}
		b.WriteByte(0)
	}
	return b.String()
}

func (t *QueueTree) readsView(partition string) (*partitionView, []*PlacementRuleSpec) {
	p := t.Partition(NormalisePartitionName(partition))
	if p == nil {
		return nil, nil
	}
	v := newPartitionView(p, nil)
	v.rel = t.Release
	return v, t.readRules(partition)
}

// readRules are the rules Reads goes through: the partition's, or
// YuniKorn's default rule when it has none.
func (t *QueueTree) readRules(partition string) []*PlacementRuleSpec {
	p := t.Partition(NormalisePartitionName(partition))
	if p == nil {
		return nil
	}
	if p.Placement == nil {
		return BuildPlacementRules(nil).Rules
	}
	return p.Placement.Rules
}

// readsOf gathers the reads of the rules it is given, in order.
type readsOf struct {
	v    *partitionView
	seen map[string]bool
	out  PlacementReads
}

// queue adds the queue a rule names, or the deepest configured queue on
// its way, once.
func (r *readsOf) queue(name string) {
	path := strings.ToLower(name)
	if r.v.configured(path) == nil {
		near, ok := r.v.nearest(name)
		if !ok {
			return
		}
		path = strings.ToLower(near)
	}
	if !r.seen[path] {
		r.seen[path] = true
		r.out.Queues = append(r.out.Queues, path)
	}
}

// rule adds the reads of one rule and its parent rules.
func (r *readsOf) rule(rule *PlacementRuleSpec, app *Application) {
	for _, n := range rule.Chain() {
		r.out.Filters = append(r.out.Filters, n.Filter)
		// The queue each level names, whether or not it exists: its
		// existence, kind and ACL chain are what the rule reads.
		o := r.v.placeRule(unfiltered(n, true), app, app.User, nil)
		if o.queue == "" {
			continue
		}
		r.queue(o.queue)
		if n.Name == RuleUser {
			if dot := strings.LastIndexByte(o.queue, '.'); dot > 0 {
				r.out.UserParents = append(r.out.UserParents, strings.ToLower(o.queue[:dot]))
			}
		}
	}
}

// unfiltered is a copy of the rule and its parents with filters that let
// everyone through, and, with create, creating every queue they name.
func unfiltered(r *PlacementRuleSpec, create bool) *PlacementRuleSpec {
	if r == nil {
		return nil
	}
	c := *r
	c.Filter = PlacementFilter{Allow: true, Empty: true}
	c.Create = c.Create || create
	c.Parent = unfiltered(r.Parent, create)
	return &c
}

// MatchUser and MatchGroup report whether the filter's user (group) part
// names the name, as a list entry or by its regexp; the filter's type is
// not applied.
func (f PlacementFilter) MatchUser(name string) bool {
	return matchFilter(f.userRE, f.UserExp != "", f.Users, name)
}

func (f PlacementFilter) MatchGroup(name string) bool {
	return matchFilter(f.groupRE, f.GroupExp != "", f.Groups, name)
}

// SubmitAllowed is YuniKorn's CheckSubmitAccess on a configured queue, as
// placement runs it: the queue's submit or admin ACL, else its parent's;
// the recovery queue never allows.
func SubmitAllowed(q *Queue, user string, groups []string) bool {
	if strings.EqualFold(q.Path, RecoveryQueue) {
		return false
	}
	for n := q; n != nil; n = n.Parent {
		if _, ok := n.Submit.Check(user, groups); ok {
			return true
		}
		if _, ok := n.Admin.Check(user, groups); ok {
			return true
		}
	}
	return false
}
