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
func (t *QueueTree) Reads(partition string, app Application) PlacementReads {
	var out PlacementReads
	p := t.Partition(NormalisePartitionName(partition))
	if p == nil {
		return out
	}
	rules := p.Placement
	if rules == nil {
		rules = BuildPlacementRules(nil)
	}
	v := newPartitionView(p, nil)
	v.rel = t.Release
	seen := map[string]bool{}
	addQueue := func(name string) {
		path := strings.ToLower(name)
		if v.configured(path) == nil {
			near, ok := v.nearest(name)
			if !ok {
				return
			}
			path = strings.ToLower(near)
		}
		if !seen[path] {
			seen[path] = true
			out.Queues = append(out.Queues, path)
		}
	}
	for _, r := range rules.Rules {
		for _, n := range r.Chain() {
			out.Filters = append(out.Filters, n.Filter)
			// The queue each level names, whether or not it exists: its
			// existence, kind and ACL chain are what the rule reads.
			o := v.placeRule(unfiltered(n, true), &app, app.User, nil)
			if o.queue == "" {
				continue
			}
			addQueue(o.queue)
			if n.Name == RuleUser {
				if dot := strings.LastIndexByte(o.queue, '.'); dot > 0 {
					out.UserParents = append(out.UserParents, strings.ToLower(o.queue[:dot]))
				}
			}
		}
	}
	addQueue(DefaultQueue)
	return out
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
