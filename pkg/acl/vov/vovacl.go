package vov

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/internal/text"
)

// ACLCommand is one vovacl command on a source file: an edit of an
// object's ACL (-append, -set, -delete, -reset), or -show.
type ACLCommand struct {
	// Spec is the source file, Object the object's id or name.
	Spec, Object string
	// Show shows the ACL; otherwise Edit is made.
	Show bool
	Edit Edit
	// As, when not nil, is who runs the command (user, host, OS groups):
	// it needs DELEGATE on the object (VIEW to show it), as vovacl does.
	As *Input
	// Log receives vovacl -v's lines (level 1) and -v -v's (level 2); nil
	// for none.
	Log func(level int, line string)
	// Warn, when not nil, receives the edit's warnings as they come, in
	// order with the log; otherwise they are in the result.
	Warn func(Diagnostic)
}

// ACLCommandResult is what a command leaves.
type ACLCommandResult struct {
	// ACL is the object's ACL after the command, as vovacl prints it.
	ACL string
	// Warnings are the edit's warnings, when ACLCommand.Warn is nil.
	Warnings []Diagnostic
	// Unchanged says why the file was not written, for an edit the ACL
	// already holds; "" when it was.
	Unchanged string
}

// Run runs the command: edits of one file run one after another, each
// from the last one written, and the file is written whole or not at all.
func (c ACLCommand) Run() (ACLCommandResult, error) {
	var res ACLCommandResult
	logf := func(level int, format string, a ...any) {
		if c.Log != nil {
			c.Log(level, fmt.Sprintf(format, a...))
		}
	}
	object, op := c.Object, string(c.Edit.Op)
	if c.Show {
		op = "show"
	}
	if !c.Show {
		// Edits of one file run one after another, each from the last one
		// written: without the lock, two editors both read the old text
		// and the second write drops the first edit.
		unlock, err := LockForEdit(c.Spec)
		if err != nil {
			return res, err
		}
		defer unlock()
	}
	doc, err := OpenDocument(c.Spec)
	if err != nil {
		return res, err
	}
	logf(1, "read %s: %s", c.Spec, describeSource(doc.Spec))
	obj, err := doc.Object(object)
	if err != nil {
		return res, err
	}
	logf(1, "%s", describeObject(obj))
	for _, l := range strings.Split(strings.TrimSuffix(FormatACL(obj.ACL), "\n"), "\n") {
		if l != "" && op != "show" {
			logf(2, "  before: %s", l)
		}
	}
	if c.As != nil {
		need := CapDelegate
		if c.Show {
			need = CapView
		}
		in := *c.As
		in.Object, in.Action = object, string(need)
		d := doc.Spec.Decide(in)
		if !d.Allow {
			return res, fmt.Errorf("%s may not %s the ACL of %s %q: %s needed (%s)",
				in.User, map[bool]string{true: "see", false: "change"}[c.Show], obj.Type, obj.Address(), need, d.Reason)
		}
		logf(1, "--as %s (role %s): %s", in.User, d.Role, d.Reason)
	}
	if c.Show {
		res.ACL = FormatACL(obj.ACL)
		return res, nil
	}
	before := doc.Bytes()
	applied, err := doc.Apply(object, c.Edit)
	if err != nil {
		return res, fmt.Errorf("%w; %s not changed", err, c.Spec)
	}
	if c.Log != nil {
		for _, line := range aclChanges(doc.Spec, obj, applied.Object, c.Edit) {
			logf(1, "%s", line)
		}
	}
	for _, w := range applied.Warnings {
		if c.Warn != nil {
			c.Warn(w)
		} else {
			res.Warnings = append(res.Warnings, w)
		}
	}
	if !applied.Changed {
		res.Unchanged = fmt.Sprintf("%s %q: the ACL already says that; %s not changed", obj.Type, obj.Address(), c.Spec)
	} else if err := doc.Write(); err != nil {
		return res, err
	} else {
		logf(1, "wrote %s (%d bytes, was %d): %s", doc.Path, len(applied.Data), len(before), changedLines(before, applied.Data))
		for _, l := range lineDiff(before, applied.Data) {
			logf(2, "  %s", l)
		}
	}
	res.ACL = FormatACL(applied.Object.ACL)
	return res, nil
}

// describeSource summarises a loaded source for -v.
func describeSource(s *Spec) string {
	out := fmt.Sprintf("project %s, owner %s, %s, %s", orNone(s.Project), s.Owner, count(len(s.Objects), "object"), count(len(s.Rules), "role rule"))
	if s.SecurityFile != "" {
		out += " (from " + s.SecurityFile + ")"
	}
	return out
}

// describeObject names the object found and where its ACL is, for -v.
func describeObject(o *Object) string {
	other := o.OtherAddress()
	if other != "" {
		other += ", "
	}
	out := fmt.Sprintf("%s %q (%sowner %s) at line %d: ", o.Type, o.Address(), other, o.Owner, o.Line)
	if o.DefaultACL {
		return out + "no acl:, so the default ACL (2 entries)"
	}
	return out + count(len(o.ACL), "ACL entry", "ACL entries")
}

// aclChanges says, entry by entry, how an edit turned before's ACL into
// after's.
func aclChanges(s *Spec, before, after *Object, e Edit) []string {
	var out []string
	if e.Op == OpReset {
		out = append(out, "-reset: the ACL becomes the default ACL, written out")
	} else {
		who := ""
		switch {
		case e.Agent.ObjectOwner():
			who = " (the object's owner, " + before.Owner + ")"
		case e.Agent.Kind == AgentOwner:
			who = " (the project owner, " + s.Owner + ")"
		}
		what := "capabilities " + capsText(e.Capabilities)
		if e.Op == OpDelete && len(e.Capabilities) == 0 {
			what = "the whole entry"
		}
		out = append(out, fmt.Sprintf("-%s: agent %s%s, %s", e.Op, e.Agent, who, what))
		if before.DefaultACL {
			out = append(out, "the default ACL is written out first: OWNER and EVERYBODY")
		}
	}
	find := func(acl []Entry, a Agent) int {
		return slices.IndexFunc(acl, func(x Entry) bool { return x.Agent == a })
	}
	for i, x := range before.ACL {
		if find(after.ACL, x.Agent) < 0 {
			out = append(out, fmt.Sprintf("%s removed (was %s)", EntryLabel(i, x.Agent), capsText(x.Capabilities)))
		}
	}
	for i, x := range after.ACL {
		j := find(before.ACL, x.Agent)
		switch {
		case j < 0:
			out = append(out, fmt.Sprintf("%s added: %s", EntryLabel(i, x.Agent), capsText(x.Capabilities)))
		case !slices.Equal(before.ACL[j].Capabilities, x.Capabilities):
			out = append(out, fmt.Sprintf("%s changed: %s -> %s", EntryLabel(i, x.Agent), capsText(before.ACL[j].Capabilities), capsText(x.Capabilities)))
		}
	}
	if len(out) == 1 && !before.DefaultACL {
		out = append(out, "no entry changes")
	}
	return out
}

func capsText(caps []Capability) string {
	if len(caps) == 0 {
		return "(nothing)"
	}
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = string(c)
	}
	return strings.Join(s, " ")
}

// lineRange finds the lines that differ between a and b: the same first
// and last lines are left out. first is 1-based; aEnd and bEnd are the
// last differing line of each, first-1 when it has none.
func lineRange(a, b []byte) (al, bl []string, first, aEnd, bEnd int) {
	al = strings.SplitAfter(string(a), "\n")
	bl = strings.SplitAfter(string(b), "\n")
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	s := 0
	for s < len(al)-p && s < len(bl)-p && al[len(al)-1-s] == bl[len(bl)-1-s] {
		s++
	}
	return al, bl, p + 1, len(al) - s, len(bl) - s
}

// changedLines says which lines of the file an edit replaced.
func changedLines(a, b []byte) string {
	_, _, first, aEnd, bEnd := lineRange(a, b)
	span := func(from, to int) string {
		if to == from {
			return "line " + strconv.Itoa(from)
		}
		return fmt.Sprintf("lines %d-%d", from, to)
	}
	switch {
	case aEnd < first:
		return span(first, bEnd) + " inserted"
	case bEnd < first:
		return span(first, aEnd) + " removed"
	}
	return span(first, aEnd) + " replaced by " + span(first, bEnd)
}

// lineDiff renders the changed lines, "-" for the old text and "+" for the
// new, each with its line number.
func lineDiff(a, b []byte) []string {
	al, bl, first, aEnd, bEnd := lineRange(a, b)
	var out []string
	for n := first; n <= aEnd; n++ {
		out = append(out, fmt.Sprintf("-%d: %s", n, strings.TrimRight(al[n-1], "\r\n")))
	}
	for n := first; n <= bEnd; n++ {
		out = append(out, fmt.Sprintf("+%d: %s", n, strings.TrimRight(bl[n-1], "\r\n")))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

var count = text.Count
