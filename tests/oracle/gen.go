package oracle

import (
	"math/rand/v2"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// Pools the drawn configurations and requests take from: names that
// YuniKorn's name rules treat differently across releases (: # / @, a
// leading digit, upper case, dots), ACLs with users, groups and the
// wildcard, and entries the ACL parser drops.
var (
	queueNames  = []string{"a", "b", "c", "default", "teams", "Sales", "team-a", "x_y", "team@x", "q:1", "dev", "ops", "alice", "sue"}
	aclPool     = []string{"", "*", " ", "sue", "sue,bob", " dev", "bob ops", "alice dev,ops", "* ops", "sue *", "admin", "svc:ci", "a#b dev", "bob,bob", " dev,dev", "ALICE"}
	userPool    = []string{"sue", "bob", "alice", "admin", "nobody", "1001", "alice+ci@corp.com", "oidc:alice@corp.com", "svc/ci", "team#1", "Sue", "", "dev"}
	groupPool   = []string{"dev", "ops", "admins", "nogroup", "sue", "team#1", "Dev"}
	rulePool    = []string{"provided", "provided", "user", "user", "tag", "tag", "fixed", "fixed", "group", "Provided"}
	filterNames = []string{"sue", "bob", "dev", "ops", "^s", "e$", "(a|b)", "x.*", "alice", "team#1", "svc/ci"}
	filterTypes = []string{"", "", "allow", "deny"}
	tagNames    = []string{"namespace", "namespace.parentqueue", "team", "Namespace"}
	fixedValues = []string{"a", "b", "root.a", "root.default", "teams", "x.y", "root.teams.b", "Sales", "new"}
	appQueues   = []string{"", "", "", "root.a", "root.b", "root.a.b", "root.default", "a", "root", "ROOT.a", "root.new", "root.a.new", "root.teams.x", "root.sales team", "root.@recovery@", "root.q:1", "root.team@x", "x.y"}
	nsPool      = []string{"", "dev", "team-a", "prod", "a", "Sales", "ns.with.dots", "alice"}
	parentTags  = []string{"", "root.teams", "root.a", "teams", "root.missing"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// DrawConfig draws a one-partition queue configuration.
func DrawConfig(r *rand.Rand) yunikorn.SchedulerConfig {
	root := yunikorn.QueueConfig{Name: "root", SubmitACL: pick(r, aclPool), AdminACL: pick(r, aclPool), Queues: drawQueues(r, 2)}
	p := yunikorn.PartitionConfig{Name: "default", Queues: []yunikorn.QueueConfig{root}}
	for n := r.IntN(4); n > 0; n-- {
		p.PlacementRules = append(p.PlacementRules, drawRule(r, 1))
	}
	return yunikorn.SchedulerConfig{Partitions: []yunikorn.PartitionConfig{p}}
}

func drawQueues(r *rand.Rand, depth int) []yunikorn.QueueConfig {
	var out []yunikorn.QueueConfig
	for n := r.IntN(4); n > 0; n-- {
		q := yunikorn.QueueConfig{Name: pick(r, queueNames)}
		if r.IntN(2) == 0 {
			q.SubmitACL = pick(r, aclPool)
		}
		if r.IntN(3) == 0 {
			q.AdminACL = pick(r, aclPool)
		}
		if depth > 0 && r.IntN(3) == 0 {
			q.Queues = drawQueues(r, depth-1)
		}
		if len(q.Queues) == 0 && r.IntN(4) == 0 {
			q.Parent = true
		}
		out = append(out, q)
	}
	return out
}

func drawRule(r *rand.Rand, depth int) yunikorn.PlacementRule {
	pr := yunikorn.PlacementRule{Name: pick(r, rulePool), Create: r.IntN(2) == 0}
	switch strings.ToLower(pr.Name) {
	case "tag":
		pr.Value = pick(r, tagNames)
	case "fixed":
		pr.Value = pick(r, fixedValues)
	}
	if r.IntN(3) == 0 {
		pr.Filter.Type = pick(r, filterTypes)
		for n := r.IntN(3); n > 0; n-- {
			pr.Filter.Users = append(pr.Filter.Users, pick(r, filterNames))
		}
		for n := r.IntN(2); n > 0; n-- {
			pr.Filter.Groups = append(pr.Filter.Groups, pick(r, filterNames))
		}
	}
	if depth > 0 && r.IntN(4) == 0 {
		p := drawRule(r, depth-1)
		pr.Parent = &p
	}
	return pr
}

// Queues lists the configured queue paths, as requests name them.
func Queues(c yunikorn.SchedulerConfig) []string {
	var out []string
	var walk func(prefix string, qs []yunikorn.QueueConfig)
	walk = func(prefix string, qs []yunikorn.QueueConfig) {
		for _, q := range qs {
			p := q.Name
			if prefix != "" {
				p = prefix + "." + q.Name
			}
			out = append(out, p)
			walk(p, q.Queues)
		}
	}
	for _, p := range c.Partitions {
		walk("", p.Queues)
	}
	return out
}

// DrawRequests draws n requests against a configuration: queue decisions
// on its queues and placements.
func DrawRequests(r *rand.Rand, c yunikorn.SchedulerConfig, n int) []Request {
	qs := Queues(c)
	out := make([]Request, 0, n)
	for range n {
		req := Request{User: pick(r, userPool)}
		for g := r.IntN(3); g > 0 && r.IntN(2) == 0; g-- {
			req.Groups = append(req.Groups, pick(r, groupPool))
		}
		switch r.IntN(4) {
		case 0:
			req.Action = "submit"
		case 1:
			req.Action = "admin"
		default:
			req.Action = Place
		}
		if req.Action != Place {
			req.Queue = pick(r, qs)
			req.Forced = r.IntN(5) == 0
		} else {
			req.Queue = pick(r, appQueues)
			if r.IntN(3) == 0 && len(qs) > 0 {
				req.Queue = pick(r, qs)
			}
			req.Tags = map[string]string{}
			if ns := pick(r, nsPool); ns != "" {
				req.Tags["namespace"] = ns
			}
			if pq := pick(r, parentTags); pq != "" {
				req.Tags["namespace.parentqueue"] = pq
			}
			if r.IntN(4) == 0 {
				req.Tags["application.create.force"] = "true"
			}
			if r.IntN(6) == 0 {
				req.Tags["team"] = pick(r, nsPool)
			}
			if len(req.Tags) == 0 {
				req.Tags = nil
			}
		}
		out = append(out, req)
	}
	return out
}

// Marshal writes the configuration as queues.yaml.
func Marshal(c yunikorn.SchedulerConfig) []byte {
	b, err := yaml.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}
