package vov

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
)

// Input is a request to the vov/acl/decision: may user, connected from
// host, perform action on object?
type Input struct {
	Object string // name or id
	Action string // a capability, any case; EXIST is read as EXISTS
	User   string
	Host   string
	// OSGroups are the user's OS groups; nil means the request carries
	// none and they are resolved.
	OSGroups []string
	// Server is the claim to act as the SERVER agent.
	Server bool
}

// Decision is the output of vov/acl/decision.
type Decision struct {
	Allow        bool     `json:"allow"`
	Capabilities []string `json:"capabilities"` // sorted ascending
	Role         string   `json:"role"`
	Reason       string   `json:"reason"`
}

// refuse is the decision for a bad input or an unknown object.
func refuse(reason string) Decision {
	return Decision{Capabilities: []string{}, Role: string(LevelUnknown), Reason: reason}
}

// Reasons of the input checks, in the order they are made.
const (
	reasonNotObject = "invalid input: not an object"
	reasonObject    = `invalid input: "object" must be a non-empty string`
	reasonAction    = `invalid input: "action" must be a string`
	reasonUser      = `invalid input: "user" must be a non-empty string`
	reasonHost      = `invalid input: "host" must be a string`
	reasonOSGroups  = `invalid input: "osgroups" must be an array of strings`
	reasonServer    = `invalid input: "server" must be a boolean`
)

// Decide answers a request with the spec's own resolver for requests
// without OS groups.
func (s *Spec) Decide(in Input) Decision { return s.DecideWith(in, s.Groups()) }

// DecideWith answers a request, resolving the OS groups of a request that
// carries none through r (a build's resolver behind the shared cache).
func (s *Spec) DecideWith(in Input, r builtins.GroupResolver) Decision {
	if in.Object == "" {
		return refuse(reasonObject)
	}
	action, ok := canonicalAction(in.Action)
	if !ok {
		return refuse(`invalid input: unknown action "` + in.Action + `"`)
	}
	if in.User == "" {
		return refuse(reasonUser)
	}
	o := s.Lookup(in.Object)
	if o == nil {
		return refuse(`unknown object "` + in.Object + `"`)
	}
	role := s.Role(in.User, in.Host)
	if in.Server {
		return s.server(o, in, role)
	}
	d := Decision{Role: string(role)}
	var held []Capability
	var matched []int
	var osgroups []string
	resolved := in.OSGroups != nil
	if resolved {
		osgroups = in.OSGroups
	}
	for i, e := range o.ACL {
		if !CanMatch(o.Type, e.Agent.Kind) {
			continue
		}
		if e.Agent.Kind == AgentOSGroup && !resolved {
			osgroups, resolved = resolveGroups(r, in.User), true
		}
		if !s.matches(e.Agent, o, in, role, osgroups) {
			continue
		}
		matched = append(matched, i)
		for _, c := range e.Capabilities {
			if !slices.Contains(held, c) {
				held = append(held, c)
			}
		}
	}
	// Holding anything implies knowing the object exists.
	if len(held) > 0 && !slices.Contains(held, CapExists) {
		held = append(held, CapExists)
	}
	d.Capabilities = make([]string, len(held))
	for i, c := range held {
		d.Capabilities[i] = string(c)
	}
	sort.Strings(d.Capabilities)
	d.Allow = slices.Contains(held, action)
	if !d.Allow {
		d.Reason = string(action) + " on " + string(o.Type) + ` "` + o.Address() + `" denied to ` + in.User + ": no matching entry grants it"
		return d
	}
	var by []string
	for _, i := range matched {
		e := o.ACL[i]
		if action == CapExists || e.Has(action) {
			by = append(by, EntryLabel(i, e.Agent))
		}
	}
	d.Reason = string(action) + " on " + string(o.Type) + ` "` + o.Address() + `" granted by ` + strings.Join(by, ", ")
	return d
}

// EntryLabel names the entry at 0-based index i in reasons: ACL 2
// EVERYBODY, ACL 3 USER "john".
func EntryLabel(i int, a Agent) string {
	l := "ACL " + strconv.Itoa(i+1) + " " + string(a.Kind)
	if a.Name != "" {
		l += ` "` + a.Name + `"`
	}
	return l
}

// canonicalAction reads the request's action: upper-cased, EXIST as EXISTS.
func canonicalAction(a string) (Capability, bool) {
	c := Capability(strings.ToUpper(a))
	if c == "EXIST" {
		c = CapExists
	}
	return c, c.Valid()
}

func resolveGroups(r builtins.GroupResolver, user string) []string {
	if r == nil {
		return []string{user}
	}
	groups, _ := r.Resolve(user) // a failed lookup keeps what was found
	return groups
}

// isLoopback reports the names of the loopback interface the SERVER
// credentials and the no-rules default accept.
func isLoopback(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// sameHost compares host names ignoring case, as strings.ToLower (and
// Rego's lower) folds them, so that every engine agrees. Not
// strings.EqualFold: Unicode folding matches pairs (ſ and s) that lower-casing
// does not, and the Rego cannot fold that way.
//
//lint:ignore SA6005 lower-casing on purpose, see above
func sameHost(a, b string) bool { return strings.ToLower(a) == strings.ToLower(b) }

// server answers a request that claims the SERVER agent: only the project
// owner on the loopback interface holds it, and then bypasses the ACL.
func (s *Spec) server(o *Object, in Input, role Level) Decision {
	if in.User == s.Owner && isLoopback(in.Host) {
		d := Decision{Allow: true, Role: string(role), Capabilities: make([]string, len(capabilities))}
		for i, c := range capabilities {
			d.Capabilities[i] = string(c)
		}
		sort.Strings(d.Capabilities)
		d.Reason = "SERVER: " + s.Owner + " on " + in.Host + " bypasses the ACL of " + string(o.Type) + ` "` + o.Address() + `"`
		return d
	}
	return Decision{Capabilities: []string{}, Role: string(role),
		Reason: "SERVER credentials refused: " + in.User + " on " + in.Host + " is not the server owner on localhost"}
}

// matches reports whether the agent of an entry that can match is the
// requester.
func (s *Spec) matches(a Agent, o *Object, in Input, role Level, osgroups []string) bool {
	switch a.Kind {
	case AgentUser:
		if a.ObjectOwner() {
			return in.User == o.Owner // "USER - role: the user that owns the VOV object"
		}
		return in.User == a.Name
	case AgentOwner:
		return in.User == s.Owner // "OWNER - role: the queue/instance/project owner"
	case AgentEverybody:
		return true
	case AgentOSGroup:
		return slices.Contains(osgroups, a.Name)
	case AgentFSGroup:
		return slices.Contains(s.FSGroups[a.Name], in.User)
	case AgentUserGroup:
		return slices.Contains(s.UserGroups[a.Name], in.User)
	case AgentHost:
		return sameHost(a.Name, in.Host)
	case AgentAdmin:
		return role == LevelAdmin
	case AgentLeader:
		return role.Rank() >= LevelLeader.Rank()
	}
	return false
}

// Role is the security level of user connected from host: the level of the
// first rule, in resolution order (RuleOrder), that matches both; UNKNOWN
// when none does. Without any rule, the project owner is ADMIN from the
// server host or the loopback interface, and nobody else has a role.
func (s *Spec) Role(user, host string) Level {
	if len(s.Rules) == 0 {
		if user == s.Owner && ((s.Host != "" && sameHost(host, s.Host)) || isLoopback(host)) {
			return LevelAdmin
		}
		return LevelUnknown
	}
	for _, r := range s.RuleOrder() {
		if s.ruleUser(r, user) && RuleHostMatches(r, host) {
			return Level(r.Level)
		}
	}
	return LevelUnknown
}

// Rule tiers: named users, then -group rules, then + rules. "-" user rules
// are in no tier: they never match.
const (
	TierUser  = 0
	TierGroup = 1
	TierAny   = 2
	TierNone  = -1
)

// RuleTier is the tier a rule is resolved in.
func RuleTier(r SecurityRule) int {
	switch {
	case r.Group != "":
		return TierGroup
	case r.User == "+":
		return TierAny
	case r.User == "-" || r.User == "":
		return TierNone
	}
	return TierUser
}

// RuleOrder returns the rules in resolution order: tier (named users,
// groups, anybody), then highest level first, then file order. The server
// re-sorts security.tcl from most user-specific to least and, within that,
// from most liberal to most restrictive (S10); "-" rules are left out.
func (s *Spec) RuleOrder() []SecurityRule {
	out := make([]SecurityRule, 0, len(s.Rules))
	for _, r := range s.Rules {
		if RuleTier(r) != TierNone {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := RuleTier(out[i]), RuleTier(out[j])
		if ti != tj {
			return ti < tj
		}
		return Level(out[i].Level).Rank() > Level(out[j].Level).Rank()
	})
	return out
}

func (s *Spec) ruleUser(r SecurityRule, user string) bool {
	switch RuleTier(r) {
	case TierUser:
		return r.User == user
	case TierGroup:
		return slices.Contains(s.UserGroups[r.Group], user)
	case TierAny:
		return true
	}
	return false
}

// RuleHostMatches reports whether a rule admits a client host: "+" any
// host, a name equal ignoring case, or an IPv4 range holding a dotted-quad
// host; "-" none.
func RuleHostMatches(r SecurityRule, host string) bool {
	for _, h := range r.Hosts {
		switch {
		case h == "+":
			return true
		case h == "-":
			continue
		case sameHost(h, host):
			return true
		}
		if lo, hi, ok := SecurityHostRange(h); ok {
			if ip, ok := ParseIPv4(host); ok && lo <= ip && ip <= hi {
				return true
			}
		}
	}
	return false
}

// DecideJSON answers a JSON-decoded input (as encoding/json decodes it)
// with the spec's own resolver; see DecideJSONWith.
func (s *Spec) DecideJSON(v any) map[string]any { return s.DecideJSONWith(v, s.Groups()) }

// DecideJSONWith checks a JSON-decoded input with the policy's type rules,
// in the policy's order, then decides. The result is the decision as a
// JSON object.
func (s *Spec) DecideJSONWith(v any, r builtins.GroupResolver) map[string]any {
	in, reason := ParseInput(v)
	d := refuse(reason)
	if reason == "" {
		d = s.DecideWith(in, r)
	}
	return map[string]any{"allow": d.Allow, "capabilities": d.Capabilities, "role": d.Role, "reason": d.Reason}
}

// ParseInput reads a JSON-decoded input; reason is the first problem, in
// the decision's order, or "".
func ParseInput(v any) (in Input, reason string) {
	m, ok := v.(map[string]any)
	if !ok {
		return in, reasonNotObject
	}
	if in.Object, ok = m["object"].(string); !ok || in.Object == "" {
		return in, reasonObject
	}
	if in.Action, ok = m["action"].(string); !ok {
		return in, reasonAction
	}
	if _, ok := canonicalAction(in.Action); !ok {
		return in, `invalid input: unknown action "` + in.Action + `"`
	}
	if in.User, ok = m["user"].(string); !ok || in.User == "" {
		return in, reasonUser
	}
	if h, present := m["host"]; present {
		if in.Host, ok = h.(string); !ok {
			return in, reasonHost
		}
	}
	if g, present := m["osgroups"]; present {
		list, ok := g.([]any)
		if !ok {
			return in, reasonOSGroups
		}
		in.OSGroups = make([]string, 0, len(list))
		for _, x := range list {
			name, ok := x.(string)
			if !ok {
				return in, reasonOSGroups
			}
			in.OSGroups = append(in.OSGroups, name)
		}
	}
	if b, present := m["server"]; present {
		if in.Server, ok = b.(bool); !ok {
			return in, reasonServer
		}
	}
	return in, ""
}
