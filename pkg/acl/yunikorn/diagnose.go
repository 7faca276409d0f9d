package yunikorn

import (
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// Diagnostic is a warning about a configuration that YuniKorn accepts but
// that probably does not do what its author meant.
type Diagnostic = source.Diagnostic

// Diagnostic codes.
const (
	CodeDroppedName      = "dropped-name"
	CodeCommaSpace       = "comma-space"
	CodeWildcardDiscards = "wildcard-discards"
	CodeCannotNarrow     = "cannot-narrow"
	CodeRootNoACL        = "root-no-acl"
	CodeResolverFallback = "resolver-fallback"
	CodeRecoveryQueue    = "recovery-queue"
)

// position is where a diagnostic points; 0s when unknown.
type position struct{ line, column int }

// Diagnose returns the traps of a tree that YuniKorn accepts silently.
func Diagnose(t *QueueTree) []Diagnostic {
	var out []Diagnostic
	add := func(at position, code, msg string) {
		out = append(out, Diagnostic{File: t.File, Line: at.line, Column: at.column, Code: code, Msg: msg})
	}
	for i, p := range t.Partitions {
		if i == 0 {
			switch p.Resolver {
			case "", "os", "test", "ldap": // ldap's own warnings need its secret: aclc check reads it
			default:
				add(position{}, CodeResolverFallback, fmt.Sprintf("partition %s: usergroupresolver type %q is not one of test, os, ldap (matched case-sensitively): YuniKorn uses the no-resolver, so each user's only group is the user name", p.Name, p.Resolver))
			}
		}
		for _, q := range p.Queues() {
			if q.Added {
				continue
			}
			diagnoseQueue(q, add)
		}
		diagnosePlacement(p, add)
	}
	source.SortDiagnostics(out, t.File)
	return out
}

func diagnoseQueue(q *Queue, add func(position, string, string)) {
	qc := q.Config
	entry := position{qc.Line, qc.Column}
	for _, a := range []struct {
		kind string
		raw  string
		at   position
		acl  ACL
	}{
		{"submitacl", qc.SubmitACL, position{qc.SubmitACLLine, qc.SubmitACLColumn}, q.Submit},
		{"adminacl", qc.AdminACL, position{qc.AdminACLLine, qc.AdminACLColumn}, q.Admin},
	} {
		line := a.at
		if line.line == 0 {
			line = entry
		}
		for _, d := range a.acl.Dropped {
			if a.acl.AllowAll {
				break // a wildcard admits everybody; what it dropped changes nothing
			}
			rule := `user names must match ^[_a-zA-Z][a-zA-Z0-9_.@-]*[$]?$`
			if d.Kind == "group" {
				rule = `group names must match ^[_a-zA-Z][a-zA-Z0-9_-]*$`
			}
			add(line, CodeDroppedName, fmt.Sprintf("%s of %s: %s %q is silently dropped by YuniKorn's ACL parser (%s)", a.kind, q.Path, d.Kind, d.Name, rule))
		}
		if i := strings.Index(a.raw, ", "); i >= 0 && strings.Count(a.raw, " ") == 1 {
			add(line, CodeCommaSpace, fmt.Sprintf("%s of %s is %q: the space after the comma starts the group list, so %q is a group, not a user", a.kind, q.Path, a.raw, strings.SplitN(a.raw[i+2:], ",", 2)[0]))
		}
		if a.acl.AllowAll && strings.TrimSpace(a.raw) != "*" {
			fields := strings.SplitN(a.raw, " ", 2)
			if len(fields) == 2 && fields[1] == "*" && fields[0] != "" && fields[0] != "*" {
				add(line, CodeWildcardDiscards, fmt.Sprintf("%s of %s is %q: the wildcard group list allows everybody and discards the users", a.kind, q.Path, a.raw))
			}
		}
		// Only ACLs that look like restrictions are reported: one that admits
		// nobody, or a non-wildcard below an ancestor that admits everybody.
		if a.raw != "" && q.Parent != nil && !a.acl.AllowAll {
			grantsNobody := len(a.acl.Users)+len(a.acl.Groups) == 0
			inherited, everybody := inheritedGrants(q.Parent, a.kind == "submitacl")
			if inherited != "" && (grantsNobody || everybody) {
				add(line, CodeCannotNarrow, fmt.Sprintf("%s of %s cannot narrow what an ancestor grants: %s", a.kind, q.Path, inherited))
			}
		}
	}
	if q.Parent == nil && len(q.Submit.Users)+len(q.Submit.Groups)+len(q.Admin.Users)+len(q.Admin.Groups) == 0 && !q.Submit.AllowAll && !q.Admin.AllowAll {
		what := "root has no submitacl or adminacl"
		if qc.Inserted {
			what = "the root queue YuniKorn inserts above the top-level queues has no ACL"
		}
		add(entry, CodeRootNoACL, what+": nobody may submit except through ACLs on the queues below it, and nobody administers root")
	}
	if q.Recovery && q.Config != nil {
		add(entry, CodeRecoveryQueue, "a configured root.@recovery@ behaves as YuniKorn's recovery queue: nobody may ever submit to it")
	}
}

// inheritedGrants describes what the ancestors from q up grant, for the
// submit check (submit or admin ACLs) or the admin check (admin ACLs).
func inheritedGrants(q *Queue, submit bool) (string, bool) {
	var parts []string
	everybody := false
	for n := q; n != nil; n = n.Parent {
		acls := []struct {
			kind string
			acl  ACL
		}{{"adminacl", n.Admin}}
		if submit {
			acls = append([]struct {
				kind string
				acl  ACL
			}{{"submitacl", n.Submit}}, acls...)
		}
		for _, a := range acls {
			if a.acl.AllowAll {
				everybody = true
				parts = append(parts, fmt.Sprintf("%s of %s allows everybody", a.kind, n.Path))
			} else if len(a.acl.Users)+len(a.acl.Groups) > 0 {
				parts = append(parts, fmt.Sprintf("%s of %s allows %s", a.kind, n.Path, a.acl.String()))
			}
		}
	}
	return strings.Join(parts, "; "), everybody
}
