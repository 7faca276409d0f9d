package gen

import (
	"math/rand/v2"
	"slices"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// The names a drawn configuration pair uses: few, so that the ACLs, the
// filters, the queues and the requests drawn against them meet often.
var (
	PairUsers      = []string{"alice", "bob", "carol", "ops"}
	PairGroups     = []string{"dev", "ops", "ml", "alice"}
	PairQueues     = []string{"a", "b", "default", "teams", "ops", "alice", "ns1"}
	PairNamespaces = []string{"ns1", "a", "default", "teams"}
)

func pickOne[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// pairACL is a valid ACL over the pair's names.
func pairACL(r *rand.Rand) string {
	switch r.IntN(8) {
	case 0:
		return ""
	case 1:
		return "*"
	}
	var us, gs []string
	for n := r.IntN(3); n > 0; n-- {
		us = append(us, pickOne(r, PairUsers))
	}
	for n := r.IntN(3); n > 0; n-- {
		gs = append(gs, pickOne(r, PairGroups))
	}
	s := joinComma(us)
	if len(gs) > 0 {
		s += " " + joinComma(gs)
	}
	return s
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func pairQueues(r *rand.Rand, depth int) []yunikorn.QueueConfig {
	if depth == 0 {
		return nil
	}
	var qs []yunikorn.QueueConfig
	used := map[string]bool{}
	for n := r.IntN(4); n > 0; n-- {
		name := pickOne(r, PairQueues)
		if used[name] {
			continue
		}
		used[name] = true
		q := yunikorn.QueueConfig{Name: name, SubmitACL: pairACL(r), AdminACL: pairACL(r)}
		if r.IntN(3) == 0 {
			q.Queues = pairQueues(r, depth-1)
		}
		q.Parent = len(q.Queues) == 0 && r.IntN(5) == 0
		qs = append(qs, q)
	}
	return qs
}

func pairFilter(r *rand.Rand) yunikorn.Filter {
	var f yunikorn.Filter
	if r.IntN(3) == 0 {
		f.Type = "deny"
	}
	switch r.IntN(5) {
	case 0:
		f.Users = []string{pickOne(r, []string{"^a.*", "o", "b$"})}
	case 1, 2:
		for n := 1 + r.IntN(2); n > 0; n-- {
			f.Users = append(f.Users, pickOne(r, PairUsers))
		}
	}
	switch r.IntN(5) {
	case 0:
		f.Groups = []string{pickOne(r, []string{"^d.*", "l", "s$"})}
	case 1, 2:
		for n := 1 + r.IntN(2); n > 0; n-- {
			f.Groups = append(f.Groups, pickOne(r, PairGroups))
		}
	}
	return f
}

func pairRule(r *rand.Rand, depth int) yunikorn.PlacementRule {
	rule := yunikorn.PlacementRule{Create: r.IntN(2) == 0}
	switch r.IntN(4) {
	case 0:
		rule.Name = yunikorn.RuleProvided
	case 1:
		rule.Name = yunikorn.RuleUser
	case 2:
		rule.Name, rule.Value = yunikorn.RuleTag, "namespace"
	default:
		rule.Name, rule.Value = yunikorn.RuleFixed, pickOne(r, []string{"a", "root.b", "teams", "root.default"})
	}
	if r.IntN(2) == 0 {
		rule.Filter = pairFilter(r)
	}
	if depth > 0 && rule.Name != yunikorn.RuleFixed && r.IntN(3) == 0 {
		p := pairRule(r, depth-1)
		p.Filter = yunikorn.Filter{}
		if p.Name == yunikorn.RuleFixed {
			p.Value = pickOne(r, []string{"teams", "root.a"})
		}
		rule.Parent = &p
	}
	return rule
}

// Pair draws a configuration and an edit of it: an ACL, a queue, a rule or
// a filter changed, added or removed, a few times over.
func Pair(r *rand.Rand) (old, new *yunikorn.SchedulerConfig) {
	root := yunikorn.QueueConfig{Name: "root", SubmitACL: pairACL(r), AdminACL: pairACL(r), Queues: pairQueues(r, 3)}
	p := yunikorn.PartitionConfig{Name: "default", Queues: []yunikorn.QueueConfig{root}}
	for n := r.IntN(4); n > 0; n-- {
		p.PlacementRules = append(p.PlacementRules, pairRule(r, 1))
	}
	old = &yunikorn.SchedulerConfig{Partitions: []yunikorn.PartitionConfig{p}}
	new = &yunikorn.SchedulerConfig{Partitions: []yunikorn.PartitionConfig{clonePartition(p)}}
	np := &new.Partitions[0]
	for n := 1 + r.IntN(3); n > 0; n-- {
		edit(r, np)
	}
	return old, new
}

func clonePartition(p yunikorn.PartitionConfig) yunikorn.PartitionConfig {
	c := p
	c.Queues = cloneQueues(p.Queues)
	c.PlacementRules = slices.Clone(p.PlacementRules)
	return c
}

func cloneQueues(qs []yunikorn.QueueConfig) []yunikorn.QueueConfig {
	out := slices.Clone(qs)
	for i := range out {
		out[i].Queues = cloneQueues(qs[i].Queues)
	}
	return out
}

// allQueues lists pointers to every queue below (and with) qs.
func allQueues(qs []yunikorn.QueueConfig, out []*yunikorn.QueueConfig) []*yunikorn.QueueConfig {
	for i := range qs {
		out = append(out, &qs[i])
		out = allQueues(qs[i].Queues, out)
	}
	return out
}

func edit(r *rand.Rand, p *yunikorn.PartitionConfig) {
	qs := allQueues(p.Queues, nil)
	q := pickOne(r, qs)
	switch r.IntN(7) {
	case 0:
		q.SubmitACL = pairACL(r)
	case 1:
		q.AdminACL = pairACL(r)
	case 2: // a child added
		name := pickOne(r, PairQueues)
		for _, c := range q.Queues {
			if c.Name == name {
				return
			}
		}
		q.Queues = append(q.Queues, yunikorn.QueueConfig{Name: name, SubmitACL: pairACL(r)})
		q.Parent = false
	case 3: // a child removed
		if len(q.Queues) > 0 {
			i := r.IntN(len(q.Queues))
			q.Queues = slices.Delete(q.Queues, i, i+1)
		}
	case 4: // a rule added or replaced
		rule := pairRule(r, 1)
		if len(p.PlacementRules) > 0 && r.IntN(2) == 0 {
			p.PlacementRules[r.IntN(len(p.PlacementRules))] = rule
		} else {
			p.PlacementRules = append(p.PlacementRules, rule)
		}
	case 5: // a rule removed, or its create flipped
		if len(p.PlacementRules) == 0 {
			return
		}
		i := r.IntN(len(p.PlacementRules))
		if r.IntN(2) == 0 {
			p.PlacementRules = slices.Delete(p.PlacementRules, i, i+1)
		} else {
			p.PlacementRules[i].Create = !p.PlacementRules[i].Create
		}
	case 6: // a filter changed
		if len(p.PlacementRules) > 0 {
			p.PlacementRules[r.IntN(len(p.PlacementRules))].Filter = pairFilter(r)
		}
	}
}
