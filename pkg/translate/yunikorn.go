package translate

import (
	"fmt"
	"strconv"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// YuniKornData normalises a queue tree into the document the Rego policy
// reads at data.aclc.yunikorn: per partition, per lower-cased queue path,
// the parsed ACLs, the leaf flag and the chain of paths up to root; per
// partition the depth of its deepest queue and the placement rules; and the cluster id YuniKorn's rejection
// messages print. Every lookup the decisions make is an object key, so their
// cost does not depend on the number of queues.
func YuniKornData(t *yunikorn.QueueTree) map[string]any {
	parts := map[string]any{}
	for _, p := range t.Partitions {
		queues := map[string]any{}
		for _, q := range p.Queues() {
			var chain []string
			for n := q; n != nil; n = n.Parent {
				chain = append(chain, n.Path)
			}
			qd := map[string]any{
				"leaf":   q.Leaf,
				"chain":  chain,
				"submit": aclData(q.Submit),
				"admin":  aclData(q.Admin),
			}
			if q.Added {
				// The recovery queue the queue decision knows of; placement
				// counts it only when the input's state says it exists.
				qd["added"] = true
			}
			queues[q.Path] = qd
		}
		parts[p.Name] = map[string]any{"queues": queues, "depth": p.Depth(), "placement": placementData(p.Placement)}
	}
	cluster := t.ClusterID
	if cluster == "" {
		cluster = yunikorn.DefaultClusterID
	}
	return map[string]any{"partitions": parts, "cluster": cluster, "release": t.Release.Data()}
}

// placementData is a partition's placement manager for the placement
// decision: the build error of a manager without rules, or per top-level
// rule its label in the reason and its chain from the innermost parent to
// the rule itself, so the policy evaluates a chain without recursion.
func placementData(pr *yunikorn.PlacementRules) map[string]any {
	if pr == nil {
		pr = yunikorn.BuildPlacementRules(nil)
	}
	if pr.Err != nil {
		return map[string]any{"error": pr.Err.Error()}
	}
	rules := make([]any, 0, len(pr.Rules))
	for i, r := range pr.Rules {
		label := "#" + strconv.Itoa(i) + " " + r.Name
		if pr.Implicit {
			label += " (implicit)"
		}
		var chain []any
		for _, c := range r.Chain() {
			chain = append(chain, map[string]any{
				"name":      c.Name,
				"create":    c.Create,
				"value":     c.Value,
				"qualified": c.Qualified,
				"filter":    filterData(c.Filter),
			})
		}
		rules = append(rules, map[string]any{"label": label, "name": r.Name, "chain": chain})
	}
	return map[string]any{"rules": rules}
}

// filterData is a compiled filter; a regexp that does not compile is left
// out, so it matches nobody, as in YuniKorn.
func filterData(f yunikorn.PlacementFilter) map[string]any {
	m := map[string]any{"allow": f.Allow, "empty": f.Empty, "users": boolSet(f.Users), "groups": boolSet(f.Groups)}
	if f.UserExp != "" && !f.UserExpBad {
		m["user_re"] = f.UserExp
	}
	if f.GroupExp != "" && !f.GroupExpBad {
		m["group_re"] = f.GroupExp
	}
	return m
}

func boolSet(s map[string]bool) map[string]any {
	out := make(map[string]any, len(s))
	for k := range s {
		out[k] = true
	}
	return out
}

// PortablePlacementRegexps refuses filter regexps that OPA's Wasm engine
// (RE2, compiled into the module) might not match as Go's regexp does, the
// engine of the reference and of OPA's evaluator. What passes is the
// common subset: ASCII literals and classes, Perl classes (\d, \w, \s),
// any-character, anchors and word boundaries without flags, repetition,
// alternation and groups.
func PortablePlacementRegexps(t *yunikorn.QueueTree) error {
	for _, p := range t.Partitions {
		if p.Placement == nil {
			continue
		}
		for i, r := range p.Placement.Rules {
			for _, c := range r.Chain() {
				for _, exp := range []string{c.Filter.UserExp, c.Filter.GroupExp} {
					if exp == "" {
						continue
					}
					if why := yunikorn.RegexpNotPortable(exp); why != "" {
						return fmt.Errorf("partition %s: placement rule #%d (%s): filter regexp %q cannot be compiled to Wasm: %s; OPA's Wasm regexp engine (RE2) may match it differently from YuniKorn (Go)", p.Name, i, r.Name, exp, why)
					}
				}
			}
		}
	}
	return nil
}

func aclData(a yunikorn.ACL) map[string]any {
	m := map[string]any{"all": a.AllowAll}
	if len(a.Users) > 0 {
		m["users"] = nameSet(a.Users)
	}
	if len(a.Groups) > 0 {
		m["groups"] = nameSet(a.Groups)
	}
	return m
}

func nameSet(s map[string]struct{}) map[string]any {
	out := make(map[string]any, len(s))
	for k := range s {
		out[k] = true
	}
	return out
}
