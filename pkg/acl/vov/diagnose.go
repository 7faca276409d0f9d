package vov

import (
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// Diagnostic is a warning about a source that loads but probably does not
// do what its author meant.
type Diagnostic = source.Diagnostic

// Diagnostic codes.
const (
	CodeAgentNotHonoured = "agent-not-honoured"
	CodeLeaderNA         = "leader-not-applicable"
	CodeCapabilityNA     = "capability-not-applicable"
	CodeNoCapabilities   = "no-capabilities"
	CodeUnknownGroup     = "unknown-group"
	CodeNobodyRule       = "rule-never-matches"
	CodeSecurityOff      = "security-off"
	CodeNoRules          = "no-rules"
	CodeNeverMatches     = "agent-never-matches"
	CodeOwnerIsProject   = "owner-is-project-owner"
)

// Diagnose returns the traps of a spec, in line order.
func Diagnose(s *Spec) []Diagnostic {
	var out []Diagnostic
	add := func(file string, line, column int, code, msg string) {
		out = append(out, Diagnostic{File: file, Line: line, Column: column, Code: code, Msg: msg})
	}
	for _, o := range s.Objects {
		for i, e := range o.ACL {
			file, line, column := s.File, e.Line, e.Column
			if line == 0 {
				line, column = o.Line, o.Column
			}
			if e.File != "" {
				file = e.File
			}
			diagnoseEntry(s, o, i, e, func(code, msg string) { add(file, line, column, code, msg) })
		}
	}
	diagnoseRules(s, add)
	source.SortDiagnostics(out, s.File)
	return out
}

// EntryDiagnostics are the warnings about one ACL entry of an object, as
// aclc vovacl reports them after an edit; i is the entry's 0-based index.
func EntryDiagnostics(s *Spec, o *Object, i int) []Diagnostic {
	var out []Diagnostic
	file := s.File
	if o.ACL[i].File != "" {
		file = o.ACL[i].File
	}
	diagnoseEntry(s, o, i, o.ACL[i], func(code, msg string) {
		out = append(out, Diagnostic{File: file, Line: o.ACL[i].Line, Column: o.ACL[i].Column, Code: code, Msg: msg})
	})
	return out
}

func diagnoseEntry(s *Spec, o *Object, i int, e Entry, add func(code, msg string)) {
	what := fmt.Sprintf("%s %q: %s", o.Type, o.Address(), EntryLabel(i, e.Agent))
	switch e.Agent.Kind {
	case AgentServer:
		add(CodeNeverMatches, what+" never matches: the SERVER agent (the project owner on localhost, \"server\": true) bypasses every ACL, so an entry grants it nothing more; the entry is kept")
		return
	case AgentUndef:
		add(CodeNeverMatches, what+" never matches: UNDEF is the last resort for someone who falls into no other agent type, and every request names a user, who is a USER name and one of EVERYBODY; the entry is kept")
		return
	case AgentOwner:
		if o.Owner != s.Owner && !ownerKeeps(o, e) {
			entry := what
			if o.DefaultACL {
				entry += " (the default ACL)"
			}
			add(CodeOwnerIsProject, fmt.Sprintf(
				"%s matches the project owner %s only, no longer the object's owner %s: OWNER is \"the queue/instance/project owner\" and a bare USER \"the user that owns the VOV object\", as the agent list of VOV's ACL documentation says; add a USER entry to keep %s's rights", entry, s.Owner, o.Owner, o.Owner))
		}
	}
	switch h := AgentHonour(e.Agent.Kind, o.Type); h {
	case HonourNo:
		add(CodeAgentNotHonoured, fmt.Sprintf(
			"%s never matches: vovacl's AGENTS TABLE marks %s \"n\" for %s objects; the entry is kept but grants nothing", what, e.Agent.Kind, o.Type.Column()))
		return
	case HonourNA:
		add(CodeLeaderNA, fmt.Sprintf(
			"%s: vovacl's AGENTS TABLE marks LEADER n/a, but VOV documents LEADER CHOWN on jobs (S15); aclc honours it for users whose role is LEADER or ADMIN", what))
	}
	var na []string
	for _, c := range e.Named {
		if !CapabilityApplies(c, o.Type) && !documentedNA(e.Agent, c) {
			na = append(na, string(c))
		}
	}
	if len(na) > 0 {
		add(CodeCapabilityNA, fmt.Sprintf(
			"%s names %s, which vovacl's CAPABILITIES TABLE marks n/a for %s objects; it is kept and still granted", what, strings.Join(na, " "), o.Type.Column()))
	}
	if len(e.Capabilities) == 0 {
		add(CodeNoCapabilities, what+" grants nothing")
	}
	switch e.Agent.Kind {
	case AgentUserGroup:
		if _, ok := s.UserGroups[e.Agent.Name]; !ok {
			add(CodeUnknownGroup, fmt.Sprintf("%s: no user group %q under usergroups; the entry matches nobody", what, e.Agent.Name))
		}
	case AgentFSGroup:
		if _, ok := s.FSGroups[e.Agent.Name]; !ok {
			add(CodeUnknownGroup, fmt.Sprintf("%s: no FairShare group %q under fsgroups; the entry matches nobody", what, e.Agent.Name))
		}
	}
}

func diagnoseRules(s *Spec, add func(string, int, int, string, string)) {
	if len(s.Rules) == 0 {
		where := "the loopback interface (localhost, 127.0.0.1, ::1)"
		if s.Host != "" {
			where = fmt.Sprintf("%s or %s", s.Host, where)
		}
		add(s.File, s.OwnerLine, s.OwnerColumn, CodeNoRules, fmt.Sprintf(
			"no role rules (security, security_tcl, roles): only the owner %s is ADMIN, and only from %s; everyone else has role UNKNOWN, so ADMIN and LEADER entries match nobody else", s.Owner, where))
	}
	for _, r := range s.Rules {
		who := "user " + r.User
		if r.Group != "" {
			who = "group " + r.Group
		}
		switch {
		case r.User == "-":
			add(r.File, r.Line, r.Column, CodeNobodyRule, fmt.Sprintf("vtk_security - %s ...: the user - is nobody; the rule never matches", r.Level))
			continue
		case r.Group != "":
			if _, ok := s.UserGroups[r.Group]; !ok {
				add(r.File, r.Line, r.Column, CodeUnknownGroup, fmt.Sprintf("vtk_security -group %s: no user group %q under usergroups; the rule matches nobody", r.Group, r.Group))
			}
		}
		if !ruleHasHost(r) {
			add(r.File, r.Line, r.Column, CodeNobodyRule, fmt.Sprintf("%s %s: every host is - (no host); the rule never matches", who, r.Level))
			continue
		}
		if r.User == "+" && r.Level == string(LevelAdmin) && ruleAnyHost(r) {
			add(r.File, r.Line, r.Column, CodeSecurityOff, "vtk_security + ADMIN +: everybody is ADMIN from every host, so every ADMIN and LEADER entry grants to everyone (security is off)")
		}
	}
}

func ruleHasHost(r SecurityRule) bool {
	for _, h := range r.Hosts {
		if h != "-" {
			return true
		}
	}
	return false
}

func ruleAnyHost(r SecurityRule) bool {
	for _, h := range r.Hosts {
		if h == "+" {
			return true
		}
	}
	return false
}

// documentedNA reports whether VOV's own documentation grants c to the
// agent although the CAPABILITIES TABLE marks it n/a: the default ACL's
// entries (OWNER with DELEGATE, ATTACH and DETACH; EVERYBODY with ATTACH)
// and LEADER CHOWN on jobs and sets (S15). Warning about those would flag
// every ACL written as VOV prints it. The object owner's USER entry is
// taken as the default OWNER entry's: it is where the owner's rights move
// now that OWNER is the project owner only.
func documentedNA(a Agent, c Capability) bool {
	if a.Kind == AgentLeader && c == "CHOWN" {
		return true
	}
	if a.ObjectOwner() {
		a = Agent{Kind: AgentOwner}
	}
	for _, d := range DefaultACL() {
		if d.Agent == a && d.Has(c) {
			return true
		}
	}
	return false
}

// ownerKeeps reports whether the object's owner is granted every
// capability of the OWNER entry e by entries that always match the owner:
// a bare USER (the object's owner), USER <owner>, or EVERYBODY, where the
// object's type honours them. Then OWNER matching the project owner takes
// nothing from the object's owner.
func ownerKeeps(o *Object, e Entry) bool {
	for _, c := range e.Capabilities {
		kept := false
		for _, f := range o.ACL {
			owners := f.Agent.Kind == AgentEverybody || (f.Agent.Kind == AgentUser && (f.Agent.ObjectOwner() || f.Agent.Name == o.Owner))
			if owners && AgentHonour(f.Agent.Kind, o.Type) != HonourNo && f.Has(c) {
				kept = true
				break
			}
		}
		if !kept {
			return false
		}
	}
	return true
}
