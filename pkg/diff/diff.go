// Package diff compares two configurations of one family by the decisions
// they give: for YuniKorn, who may submit to and administer each queue, and
// where applications land. Its contract (docs/DIFF.md): every request whose
// outcome differs between the sides is covered by a reported row, and every
// reported row is a difference.
package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// FamilyYuniKorn is the family of YuniKorn queue configurations.
const FamilyYuniKorn = "yunikorn"

// Differ compares the two sides of one family.
type Differ func(ctx context.Context, old, new *Side, o Options) (*Result, error)

// families holds each family's differ. A family with a diff of its own
// registers it here (Register); Compare dispatches on the family name.
var families = map[string]Differ{FamilyYuniKorn: compareYuniKorn}

// Register adds (or replaces) the differ of a family.
func Register(family string, d Differ) { families[family] = d }

// Compare decides both sides and keeps what changed.
func Compare(ctx context.Context, family string, old, new *Side, o Options) (*Result, error) {
	d, ok := families[family]
	if !ok {
		return nil, fmt.Errorf("no diff for configuration family %q", family)
	}
	return d(ctx, old, new, o)
}

// Side is one side of a diff: the configuration it loads and the engine
// that decides it, or what YuniKorn refuses in it.
type Side struct {
	Label string // OLD or NEW
	Tree  *yunikorn.QueueTree
	// Namespaces are the side's Namespace objects: their annotations are
	// the tags of the applications from them.
	Namespaces map[string]admission.Namespace
	Engine     engine.Engine
	Refused    []Error // errors only; a refused side is not decided
}

// Principal is an --as user: a user and its groups (none: resolved).
type Principal struct {
	User   string
	Groups []string
}

// Options are what the caller asks of a diff.
type Options struct {
	// As are users of the caller's own, decided on every queue.
	As []Principal
	// Namespaces are the namespaces whose applications are placed; none:
	// every namespace either side describes, and one it does not.
	Namespaces []string
	// Resolver is the group resolver of the --as users without groups on
	// both sides ("": each side's own).
	Resolver string
	// EveryQueue turns off the skipping of queues and requests whose
	// reads are the same on both sides; tests compare both ways.
	EveryQueue bool
}

// Result is what a diff says: exactly the JSON of -o json.
type Result struct {
	Valid     Validity          `json:"valid"`
	Queues    []QueueChange     `json:"queues"`
	Access    []AccessChange    `json:"access"`
	Placement []PlacementChange `json:"placement"`
	// Incomplete lists what the diff could not decide exhaustively; empty
	// for every configuration within the bounds of docs/DIFF.md.
	Incomplete []string `json:"incomplete,omitempty"`
}

type Validity struct {
	Old    bool    `json:"old"`
	New    bool    `json:"new"`
	Errors []Error `json:"errors"`
}

// Error is one error aclc check reports of a side, which YuniKorn refuses.
type Error struct {
	Side    string `json:"side"` // "old" or "new"
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// QueueChange is a queue one side configures and the other does not.
type QueueChange struct {
	Partition string `json:"partition"`
	Queue     string `json:"queue"`
	Change    string `json:"change"` // added or removed
	// Leaf is what the side that configures it makes of it.
	Leaf bool `json:"leaf"`
}

// Subject is who an access decision is asked for.
type Subject struct {
	User   string   `json:"user,omitempty"`
	Group  string   `json:"group,omitempty"`
	Anyone bool     `json:"anyone,omitempty"`
	Groups []string `json:"groups,omitempty"` // an --as user's --as-group values
	// as marks an --as user; user and groups are what is decided.
	as     bool
	user   string
	groups []string
}

func (s Subject) String() string {
	switch {
	case s.Anyone:
		return "anyone else"
	case s.Group != "":
		return "group " + s.Group
	case s.as && len(s.Groups) == 0:
		return s.User + " (groups resolved)"
	case s.as:
		return s.User + " in " + strings.Join(s.Groups, ",")
	}
	return s.User
}

type AccessChange struct {
	Partition string  `json:"partition"`
	Queue     string  `json:"queue"`
	Action    string  `json:"action"`
	Subject   Subject `json:"subject"`
	Old       bool    `json:"old"`
	New       bool    `json:"new"`
	OldReason string  `json:"oldReason"`
	NewReason string  `json:"newReason"`
	// InheritedBy counts the queues below that change exactly alike for
	// the subject, and have no row of their own; Below lists them.
	InheritedBy int      `json:"inheritedBy,omitempty"`
	Below       []string `json:"-"`
	subject     int      // in the subject set
}

// PlacementChange is one application request whose placement differs:
// from each of Namespaces, by User in Groups, naming Requested.
type PlacementChange struct {
	Partition  string   `json:"partition"`
	Namespaces []string `json:"namespaces"`
	User       string   `json:"user"`
	Groups     []string `json:"groups"` // empty: resolved (an --as user)
	// AlsoUsers are users this request decides exactly as User: named in
	// the same ACLs and filters of what the placement reads. AnyUser is
	// set when User stands for every user named nowhere.
	AlsoUsers []string `json:"alsoUsers,omitempty"`
	AnyUser   bool     `json:"anyUser,omitempty"`
	// AnyGroup is a group named nowhere: in Groups, it stands for none of
	// the named groups.
	AnyGroup string `json:"anyGroup,omitempty"`
	// AlsoGroups are, for a group in Groups, the groups this request
	// decides exactly as it: named in the same ACLs and filters.
	AlsoGroups map[string][]string `json:"alsoGroups,omitempty"`
	// AllGroups is set when every group set changes alike: the row stands
	// for the user in any groups.
	AllGroups bool `json:"allGroups,omitempty"`
	// Requested are the queue names the application names ("": none),
	// each changing alike.
	Requested []string `json:"requested"`
	// Unconfigured is set when a name in Requested stands for every name
	// below its parent that neither side configures.
	Unconfigured bool    `json:"unconfigured,omitempty"`
	Old          Outcome `json:"old"`
	New          Outcome `json:"new"`
	as           *Principal
}

// Outcome is where an application lands, by which rule, or YuniKorn's
// rejection.
type Outcome struct {
	Allow   bool   `json:"allow"`
	Queue   string `json:"queue,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Message string `json:"message,omitempty"`
}

// Changed reports whether the result has anything to say.
func (r *Result) Changed() bool {
	return !r.Valid.Old || !r.Valid.New || len(r.Queues) > 0 || len(r.Access) > 0 || len(r.Placement) > 0
}

// freshName is a name taken nowhere: base, or base-2 and so on, or, when a
// filter pattern matches all of those, a short name of other letters.
// When every name is taken (a pattern matching everything), there is no
// name that stands for the rest, and base is as good as any.
func freshName(base string, taken func(string) bool) string {
	for _, b := range []string{base, "zz", "q", "x9", "_"} {
		name := b
		for i := 2; i < 50; i++ {
			if !taken(name) {
				return name
			}
			name = b + "-" + strconv.Itoa(i)
		}
	}
	return base
}

// names is every name either side's decisions compare an input with:
// ACL users and groups, filter names and patterns, queue names.
type names struct {
	users, groups, queues map[string]bool
	filters               []yunikorn.PlacementFilter
}

func collectNames(trees ...*yunikorn.QueueTree) *names {
	n := &names{users: map[string]bool{}, groups: map[string]bool{}, queues: map[string]bool{}}
	for _, t := range trees {
		for _, p := range t.Partitions {
			for _, q := range p.Queues() {
				n.queues[q.Name] = true
				for _, a := range []yunikorn.ACL{q.Submit, q.Admin} {
					for u := range a.Users {
						n.users[u] = true
					}
					for g := range a.Groups {
						n.groups[g] = true
					}
				}
			}
			if p.Placement == nil {
				continue
			}
			for _, r := range p.Placement.Rules {
				for _, c := range r.Chain() {
					n.filters = append(n.filters, c.Filter)
					for u := range c.Filter.Users {
						n.users[u] = true
					}
					for g := range c.Filter.Groups {
						n.groups[g] = true
					}
				}
			}
		}
	}
	return n
}

// taken reports whether a fresh name would be compared equal to, or
// matched by, something either side holds.
func (n *names) taken(name string) bool {
	if n.users[name] || n.groups[name] || n.queues[strings.ToLower(name)] {
		return true
	}
	for _, f := range n.filters {
		if f.MatchUser(name) || f.MatchGroup(name) {
			return true
		}
	}
	return false
}

// subjectSet is every subject of the access diff, in output order: named
// users, named groups, anyone else, then the --as users. byUser and
// byGroup find a named subject by the name an ACL holds.
type subjectSet struct {
	list    []Subject
	byUser  map[string]int
	byGroup map[string]int
	anyone  int
	as      []int
}

// newSubjectSet makes a subject of every name an ACL of either side holds.
// A named user is decided in a group named nowhere, a named group for a
// user named nowhere: a decision is the OR of its user's and its groups'
// grants along the chain, so every user and group set whose access changes
// changes for one of these (docs/DIFF.md).
func newSubjectSet(n *names, trees []*yunikorn.QueueTree, as []Principal) *subjectSet {
	users, groups := map[string]bool{}, map[string]bool{}
	for _, t := range trees {
		for _, p := range t.Partitions {
			for _, q := range p.Queues() {
				for _, a := range []yunikorn.ACL{q.Submit, q.Admin} {
					for u := range a.Users {
						users[u] = true
					}
					for g := range a.Groups {
						groups[g] = true
					}
				}
			}
		}
	}
	s := &subjectSet{byUser: map[string]int{}, byGroup: map[string]int{}}
	other := freshName("anyone-else", n.taken)
	noGroup := freshName("no-named-group", n.taken)
	for _, u := range slices.Sorted(maps.Keys(users)) {
		s.byUser[u] = len(s.list)
		s.list = append(s.list, Subject{User: u, user: u, groups: []string{noGroup}})
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		s.byGroup[g] = len(s.list)
		s.list = append(s.list, Subject{Group: g, user: other, groups: []string{g}})
	}
	s.anyone = len(s.list)
	s.list = append(s.list, Subject{Anyone: true, user: other, groups: []string{noGroup}})
	for _, p := range as {
		s.as = append(s.as, len(s.list))
		s.list = append(s.list, Subject{User: p.User, Groups: p.Groups, as: true, user: p.User, groups: p.Groups})
	}
	return s
}

// named returns, in output order, the subjects the ACLs of the queues and
// their ancestors name, then anyone else and the --as users.
func (s *subjectSet) named(queues ...*yunikorn.Queue) []int {
	seen := map[int]bool{}
	for _, q := range queues {
		for n := q; n != nil; n = n.Parent {
			for _, a := range []yunikorn.ACL{n.Submit, n.Admin} {
				for u := range a.Users {
					seen[s.byUser[u]] = true
				}
				for g := range a.Groups {
					seen[s.byGroup[g]] = true
				}
			}
		}
	}
	out := slices.Sorted(maps.Keys(seen))
	out = append(out, s.anyone)
	return append(out, s.as...)
}

// compareYuniKorn is the YuniKorn family's diff.
func compareYuniKorn(ctx context.Context, oldSide, newSide *Side, o Options) (*Result, error) {
	r := &Result{Valid: Validity{Old: len(oldSide.Refused) == 0, New: len(newSide.Refused) == 0, Errors: []Error{}},
		Queues: []QueueChange{}, Access: []AccessChange{}, Placement: []PlacementChange{}}
	for _, side := range []*Side{newSide, oldSide} {
		for _, d := range side.Refused {
			d.Side = strings.ToLower(side.Label)
			r.Valid.Errors = append(r.Valid.Errors, d)
		}
	}
	// A side YuniKorn refuses never runs: there is nothing to compare.
	if !r.Valid.Old || !r.Valid.New {
		return r, nil
	}
	c := &comparer{o: o, old: oldSide, new: newSide, result: r}
	oldTree, newTree := oldSide.Tree, newSide.Tree
	c.names = collectNames(oldTree, newTree)
	c.subjects = newSubjectSet(c.names, []*yunikorn.QueueTree{oldTree, newTree}, o.As)
	// A release switch may change any decision: nothing is skipped.
	c.releaseChanged = oldTree.Release != newTree.Release
	// An --as user's groups are resolved on each side by that side's
	// resolver: when the resolver changes, every queue may change for them.
	c.resolverChanged = o.Resolver == "" && oldTree.Resolver != newTree.Resolver
	r.Queues = queueChanges(oldTree, newTree)
	var err error
	if r.Access, err = c.compareAccess(ctx); err != nil {
		return nil, err
	}
	if r.Placement, err = c.comparePlacement(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

type comparer struct {
	o                               Options
	old, new                        *Side
	result                          *Result
	names                           *names
	subjects                        *subjectSet
	releaseChanged, resolverChanged bool
	// chains keeps sameChain of each queue path of the default partition;
	// ruleAlike and defaultAlike keep readsAlike's answers.
	chains       map[string]bool
	ruleAlike    map[string]bool
	defaultAlike bool
}

// queueChanges lists the queues one side configures and the other not.
func queueChanges(oldTree, newTree *yunikorn.QueueTree) []QueueChange {
	out := []QueueChange{}
	for _, part := range partitionNames(oldTree, newTree) {
		po, pn := oldTree.Partition(part), newTree.Partition(part)
		for _, path := range configuredPaths(po, pn, false) {
			qo, qn := configured(po, path), configured(pn, path)
			switch {
			case qo == nil:
				out = append(out, QueueChange{Partition: part, Queue: path, Change: "added", Leaf: qn.Leaf})
			case qn == nil:
				out = append(out, QueueChange{Partition: part, Queue: path, Change: "removed", Leaf: qo.Leaf})
			}
		}
	}
	return out
}

func configured(p *yunikorn.Partition, path string) *yunikorn.Queue {
	if p == nil {
		return nil
	}
	if q := p.Queue(path); q != nil && !q.Added {
		return q
	}
	return nil
}

// Decide asks the engine the queue decision.
func Decide(ctx context.Context, eng engine.Engine, partition, queue, action, user string, groups []string) (yunikorn.Decision, error) {
	return decide(ctx, eng, partition, queue, action, user, groups)
}

// decide asks the engine the queue decision.
func decide(ctx context.Context, eng engine.Engine, partition, queue, action, user string, groups []string) (yunikorn.Decision, error) {
	in, _ := json.Marshal(yunikorn.Input{Partition: partition, Queue: queue, Action: action, User: user, Groups: groups})
	out, err := eng.Eval(ctx, translate.EntrypointYuniKornQueues, in)
	var d yunikorn.Decision
	if err == nil {
		err = json.Unmarshal(out, &d)
	}
	return d, err
}

// appID is the application placed: YuniKorn's rejection messages name it.
const appID = "app-1"

// place asks the engine where YuniKorn places the application.
func place(ctx context.Context, eng engine.Engine, user string, groups []string, queue string, tags map[string]string) (Outcome, error) {
	in, err := json.Marshal(yunikorn.PlacementInput{Application: yunikorn.Application{
		ID: appID, Queue: queue, User: user, Groups: groups, Tags: tags,
	}})
	if err != nil {
		return Outcome{}, err
	}
	raw, err := eng.Eval(ctx, translate.EntrypointYuniKornPlacement, in)
	var p yunikorn.Placement
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	return outcome(p), err
}

func outcome(p yunikorn.Placement) Outcome {
	o := Outcome{Allow: p.Allow, Queue: p.Queue, Rule: p.Rule, Message: p.Message}
	if p.Panic != "" {
		o.Message = "the scheduler crashes: " + p.Panic
	}
	return o
}

// partitionNames are the partitions of either side, sorted.
func partitionNames(trees ...*yunikorn.QueueTree) []string {
	seen := map[string]bool{}
	for _, t := range trees {
		for _, p := range t.Partitions {
			seen[p.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// configuredPaths are the paths of the queues either partition configures
// (leaves only, when leaves is set), in tree order: a parent before its
// children, siblings by name.
func configuredPaths(a, b *yunikorn.Partition, leaves bool) []string {
	seen := map[string]bool{}
	for _, p := range []*yunikorn.Partition{a, b} {
		if p == nil {
			continue
		}
		for _, q := range p.Queues() {
			if !q.Added && (!leaves || q.Leaf) {
				seen[q.Path] = true
			}
		}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, func(a, b string) int {
		return slices.Compare(strings.Split(a, "."), strings.Split(b, "."))
	})
	return out
}

// nearestQueue returns the queue at path, or the deepest configured queue
// on its way (where YuniKorn would create it), and whether path itself is
// configured; nil without the partition.
func nearestQueue(p *yunikorn.Partition, path string) (*yunikorn.Queue, bool) {
	if p == nil {
		return nil, false
	}
	if q := p.Queue(path); q != nil {
		return q, true
	}
	parts := strings.Split(path, ".")
	a := p.Root
	for _, part := range parts[1:] {
		next := p.Queue(a.Path + "." + part)
		if next == nil {
			break
		}
		a = next
	}
	return a, false
}

// sameChain reports whether two queues and all their ancestors have the
// same paths, kinds and ACLs: a queue decision reads nothing else.
func sameChain(a, b *yunikorn.Queue) bool {
	for ; a != nil && b != nil; a, b = a.Parent, b.Parent {
		if a.Path != b.Path || a.Leaf != b.Leaf || a.Recovery != b.Recovery || !sameACL(a.Submit, b.Submit) || !sameACL(a.Admin, b.Admin) {
			return false
		}
	}
	return a == nil && b == nil
}

func sameACL(a, b yunikorn.ACL) bool {
	return a.AllowAll == b.AllowAll && maps.Equal(a.Users, b.Users) && maps.Equal(a.Groups, b.Groups)
}

// accessNode is a queue path of either side in one partition: the queue
// each side configures there (or, where it configures none, the queue
// YuniKorn would create it under) and its place in the union tree. A node
// of neither side stands for every unconfigured queue below its parent.
type accessNode struct {
	path      string
	qo, qn    *yunikorn.Queue
	co, cn    bool // configured on the old, the new side
	parent    int  // -1 for root
	children  []int
	sameChain bool
}

func (n accessNode) configured() bool { return n.co || n.cn }

func accessNodes(po, pn *yunikorn.Partition, fresh string) []accessNode {
	var paths []string
	for _, p := range configuredPaths(po, pn, false) {
		paths = append(paths, p, p+"."+fresh)
	}
	index := make(map[string]int, len(paths))
	nodes := make([]accessNode, len(paths))
	for i, path := range paths {
		n := accessNode{path: path, parent: -1}
		n.qo, n.co = nearestQueue(po, path)
		n.qn, n.cn = nearestQueue(pn, path)
		n.sameChain = n.co == n.cn && sameChain(n.qo, n.qn)
		if dot := strings.LastIndexByte(path, '.'); dot > 0 {
			if p, ok := index[path[:dot]]; ok {
				n.parent = p
				nodes[p].children = append(nodes[p].children, i)
			}
		}
		index[path] = i
		nodes[i] = n
	}
	return nodes
}

// admits reports whether the ACL names the subject: its user, one of its
// groups, or everyone.
func admits(a yunikorn.ACL, s Subject) bool {
	if a.AllowAll {
		return true
	}
	if _, ok := a.Users[s.user]; ok {
		return true
	}
	for _, g := range s.groups {
		if _, ok := a.Groups[g]; ok {
			return true
		}
	}
	return false
}

// inherits reports whether the subject's decision of the action on node i
// is the one on its parent, on both sides. On each side, either
//   - the queue and its parent are configured, and the ACLs the action
//     reads of the queue itself do not admit the subject (admin: its
//     adminacl; submit: its submitacl and adminacl, and it is not the
//     recovery queue): YuniKorn checks a queue's own ACLs, then its
//     parent's; or
//   - the queue is not configured: it is decided where YuniKorn would
//     create it, at the deepest configured ancestor, which is the parent's
//     own decision unless the parent is a configured leaf and the action
//     submit (creation below a leaf fails).
//
// An --as user whose groups are resolved may be in any group, so never
// inherits.
func inherits(nodes []accessNode, i int, s Subject, action string) bool {
	n := nodes[i]
	if n.parent < 0 || (s.as && len(s.groups) == 0) {
		return false
	}
	p := nodes[n.parent]
	return sideInherits(n.qo, n.co, p.co, s, action) && sideInherits(n.qn, n.cn, p.cn, s, action)
}

// sideInherits is inherits on one side: q is the queue, or its deepest
// configured ancestor when it is not configured.
func sideInherits(q *yunikorn.Queue, configured, parentConfigured bool, s Subject, action string) bool {
	if !configured {
		// Admin is checked at the ancestor; only a creation (submit)
		// fails below a leaf.
		return !parentConfigured || !q.Leaf || action == yunikorn.ActionAdmin
	}
	if !parentConfigured {
		return false
	}
	if action == yunikorn.ActionAdmin {
		return !admits(q.Admin, s)
	}
	return !q.Recovery && !admits(q.Submit, s) && !admits(q.Admin, s)
}

// compareAccess decides submit and admin on every configured queue of
// either side, and on an unconfigured queue below each, for the subjects
// its ACL chain names on either side, anyone else and the --as users. Two
// rules keep the work to the size of the change:
//   - a queue whose chain is the same on both sides (the same queues,
//     leaves and ACLs from it up to root) decides alike for everybody, and
//     is skipped, unless a release switch or (for resolved --as users) the
//     resolver changed;
//   - a subject that inherits a decision on a queue from the parent (see
//     inherits) changes there exactly as on the parent: the change is
//     reported once, on the highest queue, with the configured queues
//     below that inherit it.
func (c *comparer) compareAccess(ctx context.Context) ([]AccessChange, error) {
	oldTree, newTree := c.old.Tree, c.new.Tree
	fresh := freshName("unconfigured", c.names.taken)
	out := []AccessChange{}
	for _, part := range partitionNames(oldTree, newTree) {
		nodes := accessNodes(oldTree.Partition(part), newTree.Partition(part), fresh)
		var rows []AccessChange
		var at []int // the node of each row
		for i, n := range nodes {
			for _, si := range c.subjects.named(n.qo, n.qn) {
				s := c.subjects.list[si]
				resolved := s.as && len(s.groups) == 0
				skip := !c.o.EveryQueue && !c.releaseChanged && n.sameChain && !(resolved && c.resolverChanged)
				if skip {
					continue
				}
				for _, action := range []string{yunikorn.ActionSubmit, yunikorn.ActionAdmin} {
					if !c.o.EveryQueue && inherits(nodes, i, s, action) {
						continue
					}
					do, err := decide(ctx, c.old.Engine, part, n.path, action, s.user, s.groups)
					if err != nil {
						return nil, err
					}
					dn, err := decide(ctx, c.new.Engine, part, n.path, action, s.user, s.groups)
					if err != nil {
						return nil, err
					}
					if do.Allow != dn.Allow {
						rows = append(rows, AccessChange{Partition: part, Queue: n.path, Action: action, Subject: s,
							Old: do.Allow, New: dn.Allow, OldReason: do.Reason, NewReason: dn.Reason, subject: si})
						at = append(at, i)
					}
				}
			}
		}
		if c.o.EveryQueue {
			rows, at = foldInherited(nodes, c.subjects, rows, at)
		} else {
			for r := range rows {
				rows[r].Below = inheriting(nodes, at[r], c.subjects.list[rows[r].subject], rows[r].Action, nil)
			}
		}
		for r := range rows {
			rows[r].InheritedBy = len(rows[r].Below)
			if !nodes[at[r]].configured() {
				rows[r].Queue = nodes[nodes[at[r]].parent].path + ".*"
			}
		}
		out = append(out, rows...)
	}
	return out, nil
}

// inheriting appends the configured queues below node i that inherit the
// subject's decision of the action from it, through queues that inherit
// it too.
func inheriting(nodes []accessNode, i int, s Subject, action string, out []string) []string {
	for _, c := range nodes[i].children {
		if inherits(nodes, c, s, action) {
			if nodes[c].configured() {
				out = append(out, nodes[c].path)
			}
			out = inheriting(nodes, c, s, action, out)
		}
	}
	return out
}

// foldInherited turns the rows of every queue into the rows compareAccess
// reports: a row on a queue that inherits the subject's decision from its
// parent, where the parent changed alike, is counted on the highest such
// row instead. Deciding every queue and folding must give what the
// skipping gives; a test holds them to it.
func foldInherited(nodes []accessNode, subjects *subjectSet, rows []AccessChange, at []int) ([]AccessChange, []int) {
	type key struct {
		node, subject int
		action        string
	}
	head := map[key]int{}
	dropped := make([]bool, len(rows))
	for r, row := range rows {
		i := at[r]
		if inherits(nodes, i, subjects.list[row.subject], row.Action) {
			if h, ok := head[key{nodes[i].parent, row.subject, row.Action}]; ok && rows[h].Old == row.Old && rows[h].New == row.New {
				if nodes[i].configured() {
					rows[h].Below = append(rows[h].Below, nodes[i].path)
				}
				dropped[r] = true
				head[key{i, row.subject, row.Action}] = h
				continue
			}
		}
		head[key{i, row.subject, row.Action}] = r
	}
	var out []AccessChange
	var outAt []int
	for r, row := range rows {
		if !dropped[r] {
			out = append(out, row)
			outAt = append(outAt, at[r])
		}
	}
	return out, outAt
}
