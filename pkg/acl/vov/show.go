package vov

import (
	"fmt"
	"strings"
)

// FormatEntry renders the n-th (1-based) entry of an ACL as vovacl -show
// prints it: `ACL  1: OWNER      ""   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS`.
// The index is right-aligned in two columns, the kind padded to ten, the
// name quoted ("" for unnamed kinds), then the capabilities in the entry's
// order; no trailing blank.
func FormatEntry(n int, e Entry) string {
	// The name is printed between plain quotes, as VOV does, not escaped.
	line := fmt.Sprintf("ACL %2d: %-10s \"%s\"   %s", n, e.Agent.Kind, e.Agent.Name, joinCapabilities(e.Capabilities))
	return strings.TrimRight(line, " ")
}

// FormatACL renders a whole ACL, one FormatEntry line per entry, each
// ending in a newline. An empty ACL renders as "".
func FormatACL(acl []Entry) string {
	var b strings.Builder
	for i, e := range acl {
		b.WriteString(FormatEntry(i+1, e))
		b.WriteByte('\n')
	}
	return b.String()
}

func joinCapabilities(caps []Capability) string {
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = string(c)
	}
	return strings.Join(s, " ")
}
