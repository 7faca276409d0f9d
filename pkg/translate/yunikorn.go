package translate

import (
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// YuniKornData normalises a queue tree into the document the Rego policy
// reads at data.aclc.yunikorn: per partition, per lower-cased queue path,
// the parsed ACLs, the leaf flag and the chain of paths up to root. Every
// lookup the decision makes is an object key, so its cost does not depend on
// the number of queues.
func YuniKornData(t *yunikorn.QueueTree) map[string]any {
	parts := map[string]any{}
	for _, p := range t.Partitions {
		queues := map[string]any{}
		for _, q := range p.Queues() {
			var chain []string
			for n := q; n != nil; n = n.Parent {
				chain = append(chain, n.Path)
			}
			queues[q.Path] = map[string]any{
				"leaf":   q.Leaf,
				"chain":  chain,
				"submit": aclData(q.Submit),
				"admin":  aclData(q.Admin),
			}
		}
		parts[p.Name] = map[string]any{"queues": queues}
	}
	return map[string]any{"partitions": parts}
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
