package diff

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// maxGroupSets bounds the group combinations decided for one request and
// user: beyond it the diff says it is incomplete rather than run for
// ever. Each combination sets a different subset of the group bits the
// request reads; real configurations read a few.
const maxGroupSets = 4096

// request is one application request class: the queue it names, and
// whether that name stands for every unconfigured name below its parent.
type request struct {
	queue        string
	unconfigured bool
}

// nsClass is the namespaces whose applications carry the same tags that
// either side's rules read.
type nsClass struct {
	names            []string
	oldTags, newTags map[string]string
}

// comparePlacement places, in the default partition (the only one the
// Kubernetes shim submits to), an application of every class of users,
// group sets, namespaces and requested queues whose placement the two
// sides may tell apart (docs/DIFF.md), and keeps the ones that differ. A
// row stands for every namespace of its class that changes alike.
func (c *comparer) comparePlacement(ctx context.Context) ([]PlacementChange, error) {
	po, pn := c.old.Tree.Partition("default"), c.new.Tree.Partition("default")
	out := []PlacementChange{}
	if po == nil && pn == nil {
		return out, nil
	}
	sameRules := !c.releaseChanged && po != nil && pn != nil && yunikorn.SameRules(po.PlacementConfig, pn.PlacementConfig) &&
		c.old.Tree.ClusterID == c.new.Tree.ClusterID
	requests := c.requests(po, pn)
	userRules := hasUserRule(po) || hasUserRule(pn)
	// Without a user rule, what a request reads does not depend on its
	// user, and a request whose reads are alike on both sides is skipped
	// for every user class (unless a resolved --as user's resolver
	// changed): that is found from each rule's reads, kept by what the
	// rule reads of the application, instead of once for each namespace
	// and requested queue.
	hoist := !c.o.EveryQueue && sameRules && !userRules && !(c.resolverChanged && resolvedAs(c.o.As))
	classesByReads := map[string][]userClass{}
	setsByReads := map[string]groupSetsOf{}
	noGroup := freshName("no-named-group", c.names.taken)
	anyone := freshName("anyone-else", c.names.taken)
	index := map[string]int{} // a row's key without namespaces → its place in out
	for _, ns := range c.namespaceClasses(po, pn) {
		var rows []PlacementChange
		byKey := map[string]int{} // a row's key without requests → its place in rows
		for _, req := range requests {
			app := yunikorn.Application{ID: appID, Queue: req.queue, User: anyone}
			appOld, appNew := app, app
			appOld.Tags, appNew.Tags = ns.oldTags, ns.newTags
			if hoist && maps.Equal(ns.oldTags, ns.newTags) && c.readsAlike(app, ns.oldTags) {
				// Every user class would be skipped below: the request
				// reads the same on both sides, whoever sends it.
				continue
			}
			// What a placement reads depends on the user only through a
			// user rule: without one, it is read once for every user.
			ro0, rn0 := c.old.Tree.Reads("default", appOld), c.new.Tree.Reads("default", appNew)
			var sets0 [][]string
			var alike0 map[string][]string
			var complete0 bool
			// The classes are a function of what both sides read: shared by
			// every request and namespace reading the same queues.
			readsKey := keyOfReads(ro0, rn0)
			classes, ok := classesByReads[readsKey]
			if !ok {
				classes = c.userClasses(po, pn, ro0, rn0, anyone)
				classesByReads[readsKey] = classes
			}
			for _, u := range classes {
				appOld.User, appNew.User = u.name, u.name
				ro, rn := ro0, rn0
				if userRules {
					ro, rn = c.old.Tree.Reads("default", appOld), c.new.Tree.Reads("default", appNew)
				}
				if !c.o.EveryQueue && sameRules && maps.Equal(ns.oldTags, ns.newTags) && c.sameReads(po, pn, ro, rn) && !(u.as != nil && u.as.Groups == nil && c.resolverChanged) {
					continue
				}
				sets := [][]string{nil}
				var alikeGroups map[string][]string
				if u.as == nil {
					var complete bool
					if userRules || sets0 == nil {
						key := readsKey
						if userRules {
							key = keyOfReads(ro, rn)
						}
						gs, ok := setsByReads[key]
						if !ok {
							gs.sets, gs.alike, gs.complete = groupSets(po, pn, ro, rn)
							setsByReads[key] = gs
						}
						sets0, alike0, complete0 = gs.sets, gs.alike, gs.complete
					}
					sets, alikeGroups, complete = sets0, alike0, complete0
					if !complete {
						c.incomplete("placement of " + u.name + " naming " + shownRequest(req.queue) + ": more than 4096 group combinations; the first are decided")
					}
				} else {
					sets = [][]string{u.as.Groups}
				}
				var changed []PlacementChange
				// A side places one user alike for every group set that
				// passes the same filters and the same submit checks at the
				// queues it reads; with the same rules, tags and queues on
				// both sides, equal answers there place alike on both.
				memo := u.as == nil
				sameShape := memo && sameRules && maps.Equal(ns.oldTags, ns.newTags) && sameQueues(po, pn, ro, rn)
				placedOld, placedNew := map[string]Outcome{}, map[string]Outcome{}
				for _, set := range sets {
					groups := set
					if u.as == nil && len(groups) == 0 {
						groups = []string{noGroup}
					}
					var ko, kn string
					if memo {
						ko, kn = sideKey(po, ro, u.name, groups), sideKey(pn, rn, u.name, groups)
						if sameShape && ko == kn {
							continue
						}
					}
					a, ok := placedOld[ko]
					if !memo || !ok {
						var err error
						if a, err = place(ctx, c.old.Engine, u.name, groups, req.queue, ns.oldTags); err != nil {
							return nil, err
						}
						if memo {
							placedOld[ko] = a
						}
					}
					b, ok := placedNew[kn]
					if !memo || !ok {
						var err error
						if b, err = place(ctx, c.new.Engine, u.name, groups, req.queue, ns.newTags); err != nil {
							return nil, err
						}
						if memo {
							placedNew[kn] = b
						}
					}
					if a == b {
						continue
					}
					row := PlacementChange{Partition: "default", User: u.name, Groups: slices.Clone(groups), AlsoUsers: u.alike,
						AnyUser: u.name == anyone && u.as == nil, Requested: []string{req.queue}, Unconfigured: req.unconfigured, Old: a, New: b, as: u.as}
					if row.Groups == nil {
						row.Groups = []string{}
					}
					if u.as == nil {
						row.AnyGroup = noGroup
						for _, g := range groups {
							if a := alikeGroups[g]; len(a) > 0 {
								if row.AlsoGroups == nil {
									row.AlsoGroups = map[string][]string{}
								}
								row.AlsoGroups[g] = a
							}
						}
					}
					changed = append(changed, row)
				}
				// Every group set changing alike is one row: the user's
				// groups do not matter.
				if len(sets) > 1 && len(changed) == len(sets) && allAlike(changed) {
					changed[0].Groups, changed[0].AllGroups, changed[0].AlsoGroups = []string{}, true, nil
					changed = changed[:1]
				}
				for _, row := range changed {
					key := rowKey(row, false)
					if i, ok := byKey[key]; ok {
						rows[i].Requested = append(rows[i].Requested, req.queue)
						rows[i].Unconfigured = rows[i].Unconfigured || req.unconfigured
						continue
					}
					byKey[key] = len(rows)
					rows = append(rows, row)
				}
			}
		}
		for _, row := range rows {
			key := rowKey(row, true)
			if i, ok := index[key]; ok {
				out[i].Namespaces = append(out[i].Namespaces, ns.names...)
				continue
			}
			row.Namespaces = slices.Clone(ns.names)
			index[key] = len(out)
			out = append(out, row)
		}
	}
	for i := range out {
		slices.Sort(out[i].Namespaces)
	}
	return out, nil
}

// keyOfReads names what both sides read for a request: user classes and
// group sets are functions of it (the filters are the rules').
func keyOfReads(ro, rn yunikorn.PlacementReads) string {
	return strings.Join(ro.Queues, ",") + "\x00" + strings.Join(rn.Queues, ",") + "\x00" +
		strings.Join(ro.UserParents, ",") + "\x00" + strings.Join(rn.UserParents, ",")
}

// groupSetsOf is what groupSets returns.
type groupSetsOf struct {
	sets     [][]string
	alike    map[string][]string
	complete bool
}

// hasUserRule reports whether a rule of the partition, or a parent rule,
// is a user rule: the only rule whose queue is the user's name.
func hasUserRule(p *yunikorn.Partition) bool {
	if p == nil || p.Placement == nil {
		return false
	}
	for _, r := range p.Placement.Rules {
		for _, n := range r.Chain() {
			if n.Name == yunikorn.RuleUser {
				return true
			}
		}
	}
	return false
}

func allAlike(rows []PlacementChange) bool {
	for _, r := range rows[1:] {
		if r.Old != rows[0].Old || r.New != rows[0].New {
			return false
		}
	}
	return true
}

func (c *comparer) incomplete(what string) {
	if !slices.Contains(c.result.Incomplete, what) {
		c.result.Incomplete = append(c.result.Incomplete, what)
	}
}

// rowKey is a placement row without its namespaces: rows of different
// namespaces with the same key are one row.
func rowKey(r PlacementChange, requested bool) string {
	var b strings.Builder
	req := ""
	if requested {
		req = strings.Join(r.Requested, ",")
	}
	var alsoGroups []string
	for _, g := range slices.Sorted(maps.Keys(r.AlsoGroups)) {
		alsoGroups = append(alsoGroups, g+"="+strings.Join(r.AlsoGroups[g], ","))
	}
	// Rows merge only for the same class: the same users and groups alike.
	for _, s := range []string{r.User, strings.Join(r.Groups, ","), strings.Join(r.AlsoUsers, ","), strings.Join(alsoGroups, ";"), req, r.Old.Queue, r.Old.Rule, r.Old.Message, r.New.Queue, r.New.Rule, r.New.Message} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	if r.Old.Allow {
		b.WriteByte('1')
	}
	if r.New.Allow {
		b.WriteByte('2')
	}
	if r.AllGroups {
		b.WriteByte('3')
	}
	return b.String()
}

// sameReads reports whether both sides read the same queues, with the same
// chains, and the same filters: a request whose reads are the same places
// alike for every group set.
func (c *comparer) sameReads(po, pn *yunikorn.Partition, ro, rn yunikorn.PlacementReads) bool {
	if !slices.Equal(ro.Queues, rn.Queues) || !slices.Equal(ro.UserParents, rn.UserParents) {
		return false
	}
	for _, q := range ro.Queues {
		same, ok := c.chains[q]
		if !ok {
			same = sameChain(po.Queue(q), pn.Queue(q))
			if c.chains == nil {
				c.chains = map[string]bool{}
			}
			c.chains[q] = same
		}
		if !same {
			return false
		}
	}
	return true
}

// readsAlike reports whether, with the same rules on both sides, the
// application (with these tags on both sides) reads the same in the
// default partition on both sides, as sameReads finds of the sides'
// Reads: each rule's reads are alike, and root.default's. Reads lists
// each rule's reads in order, so alike parts make alike wholes. Each
// rule's answer is kept by what the rule reads of the application.
func (c *comparer) readsAlike(app yunikorn.Application, tags map[string]string) bool {
	po, pn := c.old.Tree.Partition("default"), c.new.Tree.Partition("default")
	app.Tags = tags
	if c.ruleAlike == nil {
		c.ruleAlike = map[string]bool{}
		c.defaultAlike = c.sameReads(po, pn, c.old.Tree.DefaultReads("default"), c.new.Tree.DefaultReads("default")) &&
			c.old.Tree.ReadRules("default") == c.new.Tree.ReadRules("default")
	}
	if !c.defaultAlike {
		return false
	}
	for i := range c.old.Tree.ReadRules("default") {
		key := strconv.Itoa(i) + "\x00" + c.old.Tree.RuleInput("default", i, app)
		alike, ok := c.ruleAlike[key]
		if !ok {
			alike = c.sameReads(po, pn, c.old.Tree.RuleReads("default", i, app), c.new.Tree.RuleReads("default", i, app))
			c.ruleAlike[key] = alike
		}
		if !alike {
			return false
		}
	}
	return true
}

// resolvedAs reports whether an --as user has its groups resolved.
func resolvedAs(as []Principal) bool {
	for _, p := range as {
		if p.Groups == nil {
			return true
		}
	}
	return false
}

// sameQueues reports whether both sides read the same queues, with the
// same paths, kinds and ancestors (their ACLs may differ).
func sameQueues(po, pn *yunikorn.Partition, ro, rn yunikorn.PlacementReads) bool {
	if po == nil || pn == nil || !slices.Equal(ro.Queues, rn.Queues) || !slices.Equal(ro.UserParents, rn.UserParents) {
		return false
	}
	for _, path := range ro.Queues {
		a, b := po.Queue(path), pn.Queue(path)
		for ; a != nil && b != nil; a, b = a.Parent, b.Parent {
			if a.Path != b.Path || a.Leaf != b.Leaf || a.Recovery != b.Recovery {
				return false
			}
		}
		if a != nil || b != nil {
			return false
		}
	}
	return true
}

// sideKey is what one side's placement of user in groups reads of the
// groups: whether each filter matches one of them, and whether the user
// in them may submit at each queue the placement reads. Two group sets
// with one key place alike on that side.
func sideKey(p *yunikorn.Partition, r yunikorn.PlacementReads, user string, groups []string) string {
	if p == nil {
		return ""
	}
	key := make([]byte, 0, len(r.Filters)+len(r.Queues))
	for _, f := range r.Filters {
		in := false
		for _, g := range groups {
			if f.MatchGroup(g) {
				in = true
				break
			}
		}
		key = append(key, bit(in))
	}
	for _, path := range r.Queues {
		q := p.Queue(path)
		key = append(key, bit(q != nil && yunikorn.SubmitAllowed(q, user, groups)))
	}
	return string(key)
}

// requests are the request classes: no queue; every queue either side
// configures; below each, one name neither configures (standing for all
// of them); and, when a rule places a name that is not a full path, each
// configured queue's own name and one name configured nowhere.
func (c *comparer) requests(po, pn *yunikorn.Partition) []request {
	out := []request{{queue: ""}}
	fresh := freshName("unconfigured", c.names.taken)
	for _, path := range configuredPaths(po, pn, false) {
		out = append(out, request{queue: path}, request{queue: path + "." + fresh, unconfigured: true})
	}
	short := map[string]bool{}
	for _, p := range []*yunikorn.Partition{po, pn} {
		if p == nil {
			continue
		}
		for _, q := range p.Queues() {
			if !q.Added && q.Parent != nil {
				short[q.Name] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(short)) {
		out = append(out, request{queue: name})
	}
	return append(out, request{queue: fresh, unconfigured: true})
}

// namespaceClasses groups the namespaces placed by the tags either side's
// rules read: --app-namespace when given, else every namespace either side
// describes, the names of configured queues when a rule reads the
// namespace tag, and one namespace described nowhere.
func (c *comparer) namespaceClasses(po, pn *yunikorn.Partition) []nsClass {
	read := map[string]bool{"application.create.force": true}
	for _, p := range []*yunikorn.Partition{po, pn} {
		if p == nil || p.Placement == nil {
			continue
		}
		for _, r := range p.Placement.Rules {
			for _, n := range r.Chain() {
				if n.Name == yunikorn.RuleTag {
					read[strings.ToLower(n.Value)] = true
				}
			}
		}
	}
	names := c.o.Namespaces
	if len(names) == 0 {
		seen := map[string]bool{}
		for k := range c.old.Namespaces {
			seen[k] = true
		}
		for k := range c.new.Namespaces {
			seen[k] = true
		}
		if read["namespace"] {
			for q := range c.names.queues {
				if namespaceName.MatchString(q) {
					seen[q] = true
				}
			}
		}
		// One namespace no side describes stands for all of them: default
		// when that is one, unless a rule would read its name as a queue.
		other := "default"
		if seen[other] || (read["namespace"] && c.names.taken(other)) {
			other = freshName("other-namespace", func(n string) bool { return seen[n] || c.names.taken(n) })
		}
		seen[other] = true
		names = slices.Sorted(maps.Keys(seen))
	}
	var out []nsClass
	byKey := map[string]int{}
	for _, ns := range names {
		ot, nt := admission.NamespaceTags(ns, c.old.Namespaces), admission.NamespaceTags(ns, c.new.Namespaces)
		key := projected(ot, read) + "\x01" + projected(nt, read)
		if i, ok := byKey[key]; ok {
			out[i].names = append(out[i].names, ns)
			continue
		}
		byKey[key] = len(out)
		out = append(out, nsClass{names: []string{ns}, oldTags: ot, newTags: nt})
	}
	return out
}

// namespaceName is a Kubernetes namespace name (an RFC 1123 label).
var namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// projected is the tags a rule reads (under case folding), as one string.
func projected(tags map[string]string, read map[string]bool) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if read[strings.ToLower(k)] {
			b.WriteString(k + "=" + tags[k] + "\x00")
		}
	}
	return b.String()
}

// userClass is a user whose placement of one request stands for the
// users alike: named in the same ACLs and filters of what it reads.
type userClass struct {
	name  string
	alike []string
	as    *Principal
}

// userClasses are the users one request is placed for: the users named
// in the ACL chains and filters both sides read for it, a user matching
// each filter pattern, the users named like a queue a user rule places
// below (whose queue then exists), anyone else, and the --as users. Users
// named in the same of those are one class.
func (c *comparer) userClasses(po, pn *yunikorn.Partition, ro, rn yunikorn.PlacementReads, anyone string) []userClass {
	acls := chainACLs(po, pn, ro, rn)
	candidates := map[string]bool{anyone: true}
	for _, a := range acls {
		for u := range a.Users {
			candidates[u] = true
		}
	}
	for _, side := range []struct {
		p *yunikorn.Partition
		r yunikorn.PlacementReads
	}{{po, ro}, {pn, rn}} {
		if side.p == nil {
			continue
		}
		for _, f := range side.r.Filters {
			for u := range f.Users {
				candidates[u] = true
			}
			if f.UserExp != "" {
				if w, ok := c.names.freshWitness(f.UserExp); ok {
					candidates[w] = true
				}
			}
		}
		for _, parent := range side.r.UserParents {
			if q := side.p.Queue(parent); q != nil {
				for _, ch := range q.Children {
					candidates[ch.Name] = true
				}
			}
		}
	}
	filters := append(slices.Clone(ro.Filters), rn.Filters...)
	userParents := append(slices.Clone(ro.UserParents), rn.UserParents...)
	byKey := map[string]int{}
	var out []userClass
	// anyone first, then the named users by name.
	list := slices.Sorted(maps.Keys(candidates))
	list = slices.DeleteFunc(list, func(s string) bool { return s == anyone })
	list = append([]string{anyone}, list...)
	for _, u := range list {
		var key strings.Builder
		for _, a := range acls {
			_, in := a.Users[u]
			key.WriteByte(bit(in))
		}
		for _, f := range filters {
			key.WriteByte(bit(f.MatchUser(u)))
		}
		key.WriteByte(bit(yunikorn.UserRegExp.MatchString(u)))
		if len(userParents) > 0 {
			// The user's queue: its name, when it is a queue of its own.
			if c.names.queues[strings.ToLower(u)] || strings.Contains(u, ".") {
				key.WriteString(strings.ToLower(u))
			}
		}
		k := key.String()
		if i, ok := byKey[k]; ok {
			out[i].alike = append(out[i].alike, u)
			continue
		}
		byKey[k] = len(out)
		out = append(out, userClass{name: u})
	}
	for i := range c.o.As {
		out = append(out, userClass{name: c.o.As[i].User, as: &c.o.As[i]})
	}
	return out
}

func bit(b bool) byte {
	if b {
		return '1'
	}
	return '0'
}

// groupSets are the group sets one request is placed with: one set for
// each combination of the group bits the decision reads (each ACL of the
// chains it reads: does it name one of the groups; each filter: does it
// match one of them) that some groups give, built from one group of each
// kind (groups named in the same ACLs and filters are alike). The empty set
// is first. complete is false when more than maxGroupSets were found.
func groupSets(po, pn *yunikorn.Partition, ro, rn yunikorn.PlacementReads) (sets [][]string, alike map[string][]string, complete bool) {
	acls := chainACLs(po, pn, ro, rn)
	candidates := map[string]bool{}
	for _, a := range acls {
		for g := range a.Groups {
			candidates[g] = true
		}
	}
	for _, side := range []struct {
		p *yunikorn.Partition
		r yunikorn.PlacementReads
	}{{po, ro}, {pn, rn}} {
		if side.p == nil {
			continue
		}
		for _, f := range side.r.Filters {
			for g := range f.Groups {
				candidates[g] = true
			}
			if f.GroupExp != "" {
				if w, ok := witness(f.GroupExp); ok {
					candidates[w] = true
				}
			}
		}
	}
	filters := append(slices.Clone(ro.Filters), rn.Filters...)
	nbits := len(acls) + len(filters)
	// The bits of each group kind, one group for each.
	kinds := map[string]string{}
	alike = map[string][]string{}
	for _, g := range slices.Sorted(maps.Keys(candidates)) {
		v := make([]byte, nbits)
		for i, a := range acls {
			_, in := a.Groups[g]
			v[i] = bit(in)
		}
		for i, f := range filters {
			v[len(acls)+i] = bit(f.MatchGroup(g))
		}
		key := string(v)
		if strings.IndexByte(key, '1') < 0 {
			continue
		}
		if rep, ok := kinds[key]; ok {
			alike[rep] = append(alike[rep], g)
		} else {
			kinds[key] = g
		}
	}
	zero := strings.Repeat("0", nbits)
	reached := map[string][]string{zero: nil}
	order := []string{zero}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		for _, have := range slices.Clone(order) {
			union := orBits(have, k)
			if _, ok := reached[union]; ok {
				continue
			}
			if len(order) == maxGroupSets {
				return collect(order, reached), alike, false
			}
			reached[union] = append(slices.Clone(reached[have]), kinds[k])
			order = append(order, union)
		}
	}
	return collect(order, reached), alike, true
}

func orBits(a, b string) string {
	out := []byte(a)
	for i := range out {
		if b[i] == '1' {
			out[i] = '1'
		}
	}
	return string(out)
}

func collect(order []string, reached map[string][]string) [][]string {
	out := make([][]string, len(order))
	for i, k := range order {
		out[i] = reached[k]
	}
	return out
}

// chainACLs are the submit and admin ACLs of every queue a placement reads
// on either side, with those of their ancestors, old side first.
func chainACLs(po, pn *yunikorn.Partition, ro, rn yunikorn.PlacementReads) []yunikorn.ACL {
	var acls []yunikorn.ACL
	for _, side := range []struct {
		p *yunikorn.Partition
		r yunikorn.PlacementReads
	}{{po, ro}, {pn, rn}} {
		if side.p == nil {
			continue
		}
		for _, path := range side.r.Queues {
			for q := side.p.Queue(path); q != nil; q = q.Parent {
				acls = append(acls, q.Submit, q.Admin)
			}
		}
	}
	return acls
}
