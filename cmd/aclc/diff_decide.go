package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// diffResult is what aclc diff says: exactly the JSON of -o json.
type diffResult struct {
	Valid     diffValidity      `json:"valid"`
	Access    []accessChange    `json:"access"`
	Placement []placementChange `json:"placement"`
}

type diffValidity struct {
	Old    bool        `json:"old"`
	New    bool        `json:"new"`
	Errors []diffError `json:"errors"`
}

// diffError is one error aclc check reports of a side, which YuniKorn
// refuses.
type diffError struct {
	Side    string `json:"side"` // "old" or "new"
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// diffSubject is who a decision is asked for.
type diffSubject struct {
	User   string   `json:"user,omitempty"`
	Group  string   `json:"group,omitempty"`
	Anyone bool     `json:"anyone,omitempty"`
	Groups []string `json:"groups,omitempty"` // an --as user's --as-group values
	// as marks an --as user; user and groups are what is decided.
	as     bool
	user   string
	groups []string
}

func (s diffSubject) String() string {
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

type accessChange struct {
	Partition string      `json:"partition"`
	Queue     string      `json:"queue"`
	Action    string      `json:"action"`
	Subject   diffSubject `json:"subject"`
	Old       bool        `json:"old"`
	New       bool        `json:"new"`
	OldReason string      `json:"oldReason"`
	NewReason string      `json:"newReason"`
	// InheritedBy counts the queues below that inherit this change from
	// this queue, and have no row of their own.
	InheritedBy int `json:"inheritedBy,omitempty"`
	subject     int // in the subject set
}

type placementChange struct {
	Partition string           `json:"partition"`
	Namespace string           `json:"namespace"`
	User      string           `json:"user"`
	Groups    []string         `json:"groups"` // empty: resolved
	Requested string           `json:"requested"`
	Old       placementOutcome `json:"old"`
	New       placementOutcome `json:"new"`
	subject   diffSubject
}

// placementOutcome is where an application lands, by which rule, or
// YuniKorn's rejection.
type placementOutcome struct {
	Allow   bool   `json:"allow"`
	Queue   string `json:"queue,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Message string `json:"message,omitempty"`
}

func (r *diffResult) changed() bool {
	return !r.Valid.Old || !r.Valid.New || len(r.Access) > 0 || len(r.Placement) > 0
}

// subjectSet is every subject of a diff, in output order: named users,
// named groups, anyone else, then the --as users. byUser and byGroup find
// a named subject by the name an ACL holds.
type subjectSet struct {
	list    []diffSubject
	byUser  map[string]int
	byGroup map[string]int
	anyone  int
	as      []int
}

// anyoneName is the user "anyone else" is decided as: named in no ACL of
// either side, neither as a user nor as a group.
func anyoneName(taken func(string) bool) string {
	name := "anyone-else"
	for i := 2; taken(name); i++ {
		name = "anyone-else-" + strconv.Itoa(i)
	}
	return name
}

func newSubjectSet(trees []*yunikorn.QueueTree, as []principal) *subjectSet {
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
	// A user's only group is the user name, as YuniKorn's default
	// resolver has it.
	for _, u := range slices.Sorted(maps.Keys(users)) {
		s.byUser[u] = len(s.list)
		s.list = append(s.list, diffSubject{User: u, user: u, groups: []string{u}})
	}
	other := anyoneName(func(n string) bool { return users[n] || groups[n] })
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		s.byGroup[g] = len(s.list)
		s.list = append(s.list, diffSubject{Group: g, user: other, groups: []string{g}})
	}
	s.anyone = len(s.list)
	s.list = append(s.list, diffSubject{Anyone: true, user: other, groups: []string{other}})
	for _, p := range as {
		s.as = append(s.as, len(s.list))
		s.list = append(s.list, diffSubject{User: p.User, Groups: p.Groups, as: true, user: p.User, groups: p.Groups})
	}
	return s
}

// named returns, in output order, the subjects the ACLs of the queues
// given name (with their ancestors' when chain is set), then anyone else
// and the --as users.
func (s *subjectSet) named(chain bool, queues ...*yunikorn.Queue) []int {
	seen := map[int]bool{}
	for _, q := range queues {
		for n := q; n != nil; n = n.Parent {
			for _, a := range []yunikorn.ACL{n.Submit, n.Admin} {
				for u := range a.Users {
					seen[s.byUser[u]] = true
				}
				for g := range a.Groups {
					seen[s.byGroup[g]] = true
					if i, ok := s.byUser[g]; ok {
						seen[i] = true
					}
				}
			}
			if !chain {
				break
			}
		}
	}
	out := slices.Sorted(maps.Keys(seen))
	out = append(out, s.anyone)
	return append(out, s.as...)
}

// compare decides both sides and keeps what changed.
func (o *diffOptions) compare(ctx context.Context, oldSide, newSide *diffSide) (*diffResult, error) {
	r := &diffResult{Valid: diffValidity{Old: len(oldSide.refused) == 0, New: len(newSide.refused) == 0, Errors: []diffError{}},
		Access: []accessChange{}, Placement: []placementChange{}}
	for _, side := range []*diffSide{newSide, oldSide} {
		for _, d := range side.refused {
			r.Valid.Errors = append(r.Valid.Errors, diffError{Side: strings.ToLower(side.label), File: d.File, Line: d.Line, Column: d.Column, Code: d.Code, Message: d.Message})
		}
	}
	// A side YuniKorn refuses never runs: there is nothing to compare.
	if !r.Valid.Old || !r.Valid.New {
		return r, nil
	}
	oldTree, newTree := oldSide.sources.Queues(), newSide.sources.Queues()
	subjects := newSubjectSet([]*yunikorn.QueueTree{oldTree, newTree}, o.as.resolved())
	// An --as user's groups are resolved on each side by that side's
	// resolver: when the resolver changes, every queue may change for them.
	resolverChanged := o.resolver == "" && oldTree.Resolver != newTree.Resolver
	var err error
	if r.Access, err = o.compareAccess(ctx, oldSide, newSide, subjects, resolverChanged); err != nil {
		return nil, err
	}
	if r.Placement, err = o.comparePlacement(ctx, oldSide, newSide, subjects); err != nil {
		return nil, err
	}
	return r, nil
}

// accessNode is a queue path of either side in one partition: the queue
// each side configures there (or, where it configures none, the queue
// YuniKorn would create it under) and its place in the union tree.
type accessNode struct {
	path      string
	qo, qn    *yunikorn.Queue
	co, cn    bool // configured on the old, the new side
	parent    int  // -1 for root
	children  []int
	sameChain bool
}

func accessNodes(po, pn *yunikorn.Partition) []accessNode {
	paths := configuredPaths(po, pn, false)
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

// grants reports whether the queue's own submit or admin ACL names the
// subject: its user, or one of its groups.
func grants(q *yunikorn.Queue, s diffSubject) bool {
	for _, a := range []yunikorn.ACL{q.Submit, q.Admin} {
		if _, ok := a.Users[s.user]; ok {
			return true
		}
		for _, g := range s.groups {
			if _, ok := a.Groups[g]; ok {
				return true
			}
		}
	}
	return false
}

// inherits reports whether the subject's submit and admin decisions on
// node i are those on its parent, on both sides. On each side, either
//   - the queue and its parent are configured, and the queue's own ACLs do
//     not admit the subject (no wildcard, none of its names): YuniKorn
//     checks a queue's own ACLs, then its parent's; or
//   - neither is configured: both are decided where YuniKorn would create
//     them, at the same deepest configured ancestor.
//
// An --as user whose groups are resolved may be in any group, so never
// inherits.
func inherits(nodes []accessNode, i int, s diffSubject) bool {
	n := nodes[i]
	if n.parent < 0 || (s.as && len(s.groups) == 0) {
		return false
	}
	p := nodes[n.parent]
	return sideInherits(n.qo, n.co, p.co, s) && sideInherits(n.qn, n.cn, p.cn, s)
}

// sideInherits is inherits on one side: q is the queue, or its deepest
// configured ancestor when it is not configured.
func sideInherits(q *yunikorn.Queue, configured, parentConfigured bool, s diffSubject) bool {
	if !configured {
		return !parentConfigured
	}
	return parentConfigured && !q.Recovery && !q.Submit.AllowAll && !q.Admin.AllowAll && !grants(q, s)
}

// compareAccess decides submit and admin on every configured queue of
// either side, for the subjects its ACL chain names on either side, anyone
// else and the --as users. Two rules keep the work to the size of the
// change:
//   - a queue whose chain is the same on both sides (the same queues,
//     leaves and ACLs from it up to root) decides alike for everybody, and
//     is skipped;
//   - a subject that inherits its decisions on a queue from the parent
//     (see inherits) changes there exactly as on the parent: the change is
//     reported once, on the highest queue, with the number of queues below
//     that inherit it, so that an admin added to root is one row, not one
//     per queue.
func (o *diffOptions) compareAccess(ctx context.Context, oldSide, newSide *diffSide, subjects *subjectSet, resolverChanged bool) ([]accessChange, error) {
	oldTree, newTree := oldSide.sources.Queues(), newSide.sources.Queues()
	out := []accessChange{}
	for _, part := range partitionNames(oldTree, newTree) {
		nodes := accessNodes(oldTree.Partition(part), newTree.Partition(part))
		var rows []accessChange
		var at []int // the node of each row
		for i, n := range nodes {
			for _, si := range subjects.named(true, n.qo, n.qn) {
				s := subjects.list[si]
				resolved := s.as && len(s.groups) == 0
				if !o.everyQueue && ((n.sameChain && !(resolved && resolverChanged)) || inherits(nodes, i, s)) {
					continue
				}
				for _, action := range []string{yunikorn.ActionSubmit, yunikorn.ActionAdmin} {
					do, err := decideOn(ctx, oldSide.eng, part, n.path, action, s.user, s.groups)
					if err != nil {
						return nil, err
					}
					dn, err := decideOn(ctx, newSide.eng, part, n.path, action, s.user, s.groups)
					if err != nil {
						return nil, err
					}
					if do.Allow != dn.Allow {
						rows = append(rows, accessChange{Partition: part, Queue: n.path, Action: action, Subject: s,
							Old: do.Allow, New: dn.Allow, OldReason: do.Reason, NewReason: dn.Reason, subject: si})
						at = append(at, i)
					}
				}
			}
		}
		if o.everyQueue {
			rows = foldInherited(nodes, subjects, rows, at)
		} else {
			for r := range rows {
				rows[r].InheritedBy = countInheriting(nodes, at[r], subjects.list[rows[r].subject])
			}
		}
		out = append(out, rows...)
	}
	return out, nil
}

// countInheriting counts the queues below node i that inherit the
// subject's decisions from it, through queues that inherit them too.
func countInheriting(nodes []accessNode, i int, s diffSubject) int {
	n := 0
	for _, c := range nodes[i].children {
		if inherits(nodes, c, s) {
			n += 1 + countInheriting(nodes, c, s)
		}
	}
	return n
}

// foldInherited turns the rows of every queue into the rows compareAccess
// reports: a row on a queue that inherits the subject's decisions from
// its parent, where the parent changed alike, is counted on the highest
// such row instead. Deciding every queue and folding must give what the
// skipping gives; a test holds them to it.
func foldInherited(nodes []accessNode, subjects *subjectSet, rows []accessChange, at []int) []accessChange {
	type key struct {
		node, subject int
		action        string
	}
	head := map[key]int{}
	dropped := make([]bool, len(rows))
	for r, row := range rows {
		i := at[r]
		if inherits(nodes, i, subjects.list[row.subject]) {
			if h, ok := head[key{nodes[i].parent, row.subject, row.Action}]; ok && rows[h].Old == row.Old && rows[h].New == row.New {
				rows[h].InheritedBy++
				dropped[r] = true
				head[key{i, row.subject, row.Action}] = h
				continue
			}
		}
		head[key{i, row.subject, row.Action}] = r
	}
	var out []accessChange
	for r, row := range rows {
		if !dropped[r] {
			out = append(out, row)
		}
	}
	return out
}

// comparePlacement places, in the default partition (the only one the
// Kubernetes shim submits to), an application of every subject from every
// namespace, naming no queue, and naming each configured leaf whose own
// ACLs name the subject (anyone else and the --as users: every leaf). A
// subject named only higher up is left out of the leaves below: an admin
// of root would otherwise be placed once per leaf, and what changes for
// them there is their access, which compareAccess reports once.
func (o *diffOptions) comparePlacement(ctx context.Context, oldSide, newSide *diffSide, subjects *subjectSet) ([]placementChange, error) {
	oldTree, newTree := oldSide.sources.Queues(), newSide.sources.Queues()
	po, pn := oldTree.Partition("default"), newTree.Partition("default")
	requested := make([][]string, len(subjects.list))
	for i := range requested {
		requested[i] = []string{""}
	}
	for _, path := range configuredPaths(po, pn, true) {
		var qo, qn *yunikorn.Queue
		if po != nil {
			qo = po.Queue(path)
		}
		if pn != nil {
			qn = pn.Queue(path)
		}
		for _, i := range subjects.named(false, qo, qn) {
			requested[i] = append(requested[i], path)
		}
	}
	oldKnown := translate.ReplicatedNamespaces(oldSide.sources.Kubernetes())
	newKnown := translate.ReplicatedNamespaces(newSide.sources.Kubernetes())
	namespaces := o.namespaces
	if len(namespaces) == 0 {
		all := maps.Clone(oldKnown)
		maps.Copy(all, newKnown)
		namespaces = placeNamespaces(nil, all)
	}
	out := []placementChange{}
	for _, ns := range namespaces {
		oldTags, newTags := admission.NamespaceTags(ns, oldKnown), admission.NamespaceTags(ns, newKnown)
		for i, s := range subjects.list {
			for _, q := range requested[i] {
				b, err := place(ctx, oldSide.eng, s, q, oldTags)
				if err != nil {
					return nil, err
				}
				a, err := place(ctx, newSide.eng, s, q, newTags)
				if err != nil {
					return nil, err
				}
				if b != a {
					groups := s.groups
					if groups == nil {
						groups = []string{}
					}
					out = append(out, placementChange{Partition: "default", Namespace: ns, User: s.user, Groups: groups,
						Requested: q, Old: b, New: a, subject: s})
				}
			}
		}
	}
	return out, nil
}

// diffAppID is the application placed: YuniKorn's rejection messages name
// it.
const diffAppID = "app-1"

// place asks the engine where YuniKorn places the subject's application
// naming queue (none for ""), with its namespace's tags.
func place(ctx context.Context, eng engine.Engine, s diffSubject, queue string, tags map[string]string) (placementOutcome, error) {
	in, err := json.Marshal(yunikorn.PlacementInput{Application: yunikorn.Application{
		ID: diffAppID, Queue: queue, User: s.user, Groups: s.groups, Tags: tags,
	}})
	if err != nil {
		return placementOutcome{}, err
	}
	raw, err := eng.Eval(ctx, translate.EntrypointYuniKornPlacement, in)
	var p yunikorn.Placement
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	return outcome(p), err
}

func outcome(p yunikorn.Placement) placementOutcome {
	o := placementOutcome{Allow: p.Allow, Queue: p.Queue, Rule: p.Rule, Message: p.Message}
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
