package vov

import (
	"strings"

	aclvov "github.com/aclc-dev/aclc/pkg/acl/vov"
)

// Data normalises a VOV spec into data.aclc.vov, the document
// policy/rego/vov/acl.rego reads. Every lookup a decision makes is an
// object key, so its cost depends on the entries of one object and the
// rules of one user, never on how many objects or users there are:
//
//	owner      the project owner
//	host       the server host, lower-cased
//	no_rules   true when there are no role rules at all
//	objects    every name (a file's path) and id -> the object's address
//	acls       address -> {type, address, subject: `job "00123456"` (the
//	           type and the quoted address, as reasons name the object),
//	           owner, entries}; entries are those that can match only
//	           (aclvov.CanMatch: not an agent marked "n" for the type, not
//	           SERVER or UNDEF), in ACL order, each {kind, test, name, caps:
//	           {CAP: true}, with EXISTS when it holds anything, label:
//	           `ACL 3 USER "john"`}
//	           with n counted over the whole ACL; a USER entry without a
//	           name is the object owner's role, and its test is OBJOWNER
//	           (the kind for every other entry)
//	members    user -> {usergroups: {g: true}, fsgroups: {g: true}}
//	user_rules user -> that user's named-user rules, then the -group rules
//	           of the user's groups, each tier highest level first, then in
//	           file order
//	any_rules  the "+" rules, highest level first, then in file order
//
// A rule is {level, any_host, names: {lower-cased host: true}, ranges:
// [[lo, hi]...]} with IPv4 ranges as 32-bit numbers; "-" hosts and "-"
// users are left out, as they never match. The group resolution's
// "resolver" (and "groups" for a static build) are added by Compiled.Data.
func Data(s *aclvov.Spec) map[string]any {
	objects := map[string]any{}
	acls := map[string]any{}
	for _, o := range s.Objects {
		addr := o.Address()
		if o.Name != "" {
			objects[o.Name] = addr
		}
		if o.ID != "" {
			objects[o.ID] = addr
		}
		entries := []any{}
		for i, e := range o.ACL {
			if !aclvov.CanMatch(o.Type, e.Agent.Kind) {
				continue
			}
			caps := map[string]any{}
			for _, c := range e.Capabilities {
				caps[string(c)] = true
			}
			// Holding anything implies knowing the object exists: written
			// here once, so a decision's union of the caps it matched is
			// its answer.
			if len(caps) > 0 {
				caps[string(aclvov.CapExists)] = true
			}
			entry := map[string]any{"kind": string(e.Agent.Kind), "test": entryTest(e.Agent), "caps": caps, "label": aclvov.EntryLabel(i, e.Agent)}
			if e.Agent.Name != "" {
				entry["name"] = e.Agent.Name
				if e.Agent.Kind == aclvov.AgentHost {
					entry["name"] = strings.ToLower(e.Agent.Name)
				}
			}
			entries = append(entries, entry)
		}
		acls[addr] = map[string]any{"type": string(o.Type), "address": addr, "subject": string(o.Type) + ` "` + addr + `"`, "owner": o.Owner, "entries": entries}
	}

	members := map[string]map[string]map[string]any{}
	member := func(user, kind, group string) {
		m := members[user]
		if m == nil {
			m = map[string]map[string]any{"usergroups": {}, "fsgroups": {}}
			members[user] = m
		}
		m[kind][group] = true
	}
	for g, users := range s.UserGroups {
		for _, u := range users {
			member(u, "usergroups", g)
		}
	}
	for g, users := range s.FSGroups {
		for _, u := range users {
			member(u, "fsgroups", g)
		}
	}
	membersData := make(map[string]any, len(members))
	for u, m := range members {
		membersData[u] = map[string]any{"usergroups": m["usergroups"], "fsgroups": m["fsgroups"]}
	}

	userRules := map[string][]any{}
	anyRules := []any{}
	for _, r := range s.RuleOrder() {
		rd := ruleData(r)
		switch aclvov.RuleTier(r) {
		case aclvov.TierUser:
			userRules[r.User] = append(userRules[r.User], rd)
		case aclvov.TierGroup:
			for _, u := range s.UserGroups[r.Group] {
				userRules[u] = append(userRules[u], rd)
			}
		case aclvov.TierAny:
			anyRules = append(anyRules, rd)
		}
	}
	// RuleOrder puts every named-user rule before every group rule, so each
	// user's list is already in resolution order.
	userRulesData := make(map[string]any, len(userRules))
	for u, list := range userRules {
		userRulesData[u] = list
	}
	// The capabilities as a table, so that the policy checks an action with
	// one lookup instead of building the set at every decision.
	capabilities := map[string]any{}
	for _, c := range aclvov.Capabilities() {
		capabilities[string(c)] = true
	}
	return map[string]any{
		"capabilities": capabilities,
		"owner":        s.Owner,
		"host":         strings.ToLower(s.Host),
		"no_rules":     len(s.Rules) == 0,
		"objects":      objects,
		"acls":         acls,
		"members":      membersData,
		"user_rules":   userRulesData,
		"any_rules":    anyRules,
	}
}

func ruleData(r aclvov.SecurityRule) map[string]any {
	names := map[string]any{}
	ranges := []any{}
	anyHost := false
	for _, h := range r.Hosts {
		switch {
		case h == "+":
			anyHost = true
		case h == "-":
		default:
			names[strings.ToLower(h)] = true
			if lo, hi, ok := aclvov.SecurityHostRange(h); ok {
				ranges = append(ranges, []any{lo, hi})
			}
		}
	}
	return map[string]any{"level": r.Level, "any_host": anyHost, "names": names, "ranges": ranges}
}

// entryTest is how the policy matches an entry: by its kind, except a USER
// entry without a name, which stands for the object's owner.
func entryTest(a aclvov.Agent) string {
	if a.Kind == aclvov.AgentUser && a.Name == "" {
		return "OBJOWNER"
	}
	return string(a.Kind)
}
