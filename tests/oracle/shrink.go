package oracle

import (
	"maps"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/tests/oracle/shrink"
)

// Shrink makes a disagreement minimal: it drops placement rules, queues,
// ACLs, groups and tags one at a time, as long as YuniKorn and aclc still
// disagree the same way (same kind of question, same message-only flag).
//
// A disagreement of one of aclc's engines besides native (d.Engine) is
// shrunk on that engine alone.
func Shrink(rel release.Version, c yunikorn.SchedulerConfig, req *Request, d Diff) (yunikorn.SchedulerConfig, *Request) {
	var eng *Engines
	if d.Engine != "" {
		eng = NewEngines(rel, strings.Split(d.Engine, ","))
		defer eng.Close()
	}
	still := func(c yunikorn.SchedulerConfig, r *Request) bool {
		var reqs []Request
		if r != nil {
			reqs = []Request{*r}
		}
		for _, e := range CompareOn(rel, Marshal(c), reqs, eng).Diffs {
			if e.What == d.What && e.MessageOnly == d.MessageOnly && e.Engine == d.Engine {
				return true
			}
		}
		return false
	}
	// Configuration steps first; the request's only once the
	// configuration has none left.
	type input struct {
		c   yunikorn.SchedulerConfig
		req *Request
	}
	smaller := func(x input) []input {
		var out []input
		for _, c := range configCandidates(x.c) {
			out = append(out, input{c, x.req})
		}
		if x.req != nil {
			for _, r := range requestCandidates(*x.req) {
				out = append(out, input{x.c, &r})
			}
		}
		return out
	}
	small := shrink.Greedy(input{c, req}, smaller, func(x input) bool { return still(x.c, x.req) })
	return small.c, small.req
}

func clone(c yunikorn.SchedulerConfig) yunikorn.SchedulerConfig {
	// Through YAML: the configuration is plain data.
	var out yunikorn.SchedulerConfig
	out.Partitions = make([]yunikorn.PartitionConfig, len(c.Partitions))
	for i, p := range c.Partitions {
		out.Partitions[i] = yunikorn.PartitionConfig{Name: p.Name, Queues: cloneQueues(p.Queues), PlacementRules: slices.Clone(p.PlacementRules), Limits: p.Limits}
	}
	return out
}

func cloneQueues(qs []yunikorn.QueueConfig) []yunikorn.QueueConfig {
	out := slices.Clone(qs)
	for i := range out {
		out[i].Queues = cloneQueues(out[i].Queues)
	}
	return out
}

// configCandidates are the configurations one step smaller than c.
func configCandidates(c yunikorn.SchedulerConfig) []yunikorn.SchedulerConfig {
	var out []yunikorn.SchedulerConfig
	if len(c.Partitions) != 1 {
		return nil
	}
	rules := c.Partitions[0].PlacementRules
	for i := range rules {
		n := clone(c)
		n.Partitions[0].PlacementRules = slices.Delete(slices.Clone(rules), i, i+1)
		out = append(out, n)
		r := rules[i]
		simpler := []yunikorn.PlacementRule{}
		if r.Parent != nil {
			s := r
			s.Parent = nil
			simpler = append(simpler, s)
		}
		if r.Filter.Type != "" || len(r.Filter.Users) > 0 || len(r.Filter.Groups) > 0 {
			s := r
			s.Filter = yunikorn.Filter{}
			simpler = append(simpler, s)
		}
		if r.Create {
			s := r
			s.Create = false
			simpler = append(simpler, s)
		}
		for _, s := range simpler {
			n := clone(c)
			n.Partitions[0].PlacementRules[i] = s
			out = append(out, n)
		}
	}
	// Queues: every queue can be removed or lose its ACLs.
	var paths [][]int
	var walk func(prefix []int, qs []yunikorn.QueueConfig)
	walk = func(prefix []int, qs []yunikorn.QueueConfig) {
		for i, q := range qs {
			p := append(slices.Clone(prefix), i)
			paths = append(paths, p)
			walk(p, q.Queues)
		}
	}
	walk(nil, c.Partitions[0].Queues)
	for _, p := range paths {
		if len(p) > 1 {
			n := clone(c)
			parent := at(&n, p[:len(p)-1])
			parent.Queues = slices.Delete(parent.Queues, p[len(p)-1], p[len(p)-1]+1)
			out = append(out, n)
		}
		q := at(&c, p)
		if q.SubmitACL != "" {
			n := clone(c)
			at(&n, p).SubmitACL = ""
			out = append(out, n)
		}
		if q.AdminACL != "" {
			n := clone(c)
			at(&n, p).AdminACL = ""
			out = append(out, n)
		}
		if q.Parent {
			n := clone(c)
			at(&n, p).Parent = false
			out = append(out, n)
		}
	}
	return out
}

func at(c *yunikorn.SchedulerConfig, path []int) *yunikorn.QueueConfig {
	q := &c.Partitions[0].Queues[path[0]]
	for _, i := range path[1:] {
		q = &q.Queues[i]
	}
	return q
}

// requestCandidates are the requests one step smaller than r.
func requestCandidates(r Request) []Request {
	var out []Request
	for i := range r.Groups {
		n := r
		n.Groups = slices.Delete(slices.Clone(r.Groups), i, i+1)
		if len(n.Groups) == 0 {
			n.Groups = nil
		}
		out = append(out, n)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Tags)) {
		n := r
		n.Tags = maps.Clone(r.Tags)
		delete(n.Tags, k)
		if len(n.Tags) == 0 {
			n.Tags = nil
		}
		out = append(out, n)
	}
	if r.Forced {
		n := r
		n.Forced = false
		out = append(out, n)
	}
	if r.Action == Place && r.Queue != "" {
		n := r
		n.Queue = ""
		out = append(out, n)
	}
	return out
}
