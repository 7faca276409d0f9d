package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/internal/text"
)

// write prints the result in the format asked for. Text with no change is
// empty, as diff prints nothing for equal files.
func (r *Result) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "markdown":
		bw := bufio.NewWriter(w)
		r.writeMarkdown(bw)
		return bw.Flush()
	}
	bw := bufio.NewWriter(w)
	r.writeText(bw)
	return bw.Flush()
}

func (e Error) located() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
		if e.Column > 0 {
			loc += ":" + strconv.Itoa(e.Column)
		}
	}
	return loc + ": " + e.Message
}

// refusalLines say what YuniKorn refuses, NEW first.
func (r *Result) RefusalLines() []string {
	var out []string
	for _, e := range r.Valid.Errors {
		out = append(out, strings.ToUpper(e.Side)+" is refused by YuniKorn: "+oneLine(e.located()))
	}
	return out
}

func (r *Result) writeText(w io.Writer) {
	for _, l := range r.RefusalLines() {
		fmt.Fprintln(w, l)
	}
	for _, l := range r.Incomplete {
		fmt.Fprintln(w, "! incomplete: "+l)
	}
	for _, c := range r.Queues {
		fmt.Fprintln(w, c.Line())
	}
	for _, c := range r.Access {
		sign, text := c.Line()
		fmt.Fprintf(w, "%s %s\n", sign, text)
	}
	for _, c := range r.Placement {
		fmt.Fprintf(w, "%s %s\n", c.Sign(), c.Text("->"))
	}
}

// line is an access change as diff's text says it: its sign (+ gained,
// - lost) and "subject: action on queue (now/was: reason)".
func (c AccessChange) Line() (sign, text string) {
	sign, why := "-", "was: "+c.OldReason
	if c.New {
		sign, why = "+", "now: "+c.NewReason
	}
	return sign, fmt.Sprintf("%s: %s on %s (%s)", c.Subject, c.Action, c.where(), why)
}

// text is a placement change without its sign, old and new joined by
// arrow.
func (c PlacementChange) Text(arrow string) string {
	return fmt.Sprintf("%s: %s, %s: %s %s %s", c.namespaces(), c.Subject(), c.requestedShown(), c.Old, arrow, c.New)
}

// Line is a queue change as diff's text says it.
func (c QueueChange) Line() string {
	kind := "parent queue"
	if c.Leaf {
		kind = "leaf queue"
	}
	sign := "+"
	if c.Change == "removed" {
		sign = "-"
	}
	return fmt.Sprintf("%s %s %s %s", sign, kind, qualified(c.Partition, c.Queue), c.Change)
}

// where names the queue of an access change, and the queues below that
// inherit it.
func (c AccessChange) where() string {
	q := qualified(c.Partition, c.Queue)
	if c.InheritedBy > 0 {
		q += " and " + count(c.InheritedBy, "queue") + " below it"
	}
	return q
}

// sign is + for an application that is now placed, - for one now
// rejected, ~ for one that lands elsewhere or by another rule.
func (c PlacementChange) Sign() string {
	switch {
	case c.New.Allow && !c.Old.Allow:
		return "+"
	case c.Old.Allow && !c.New.Allow:
		return "-"
	}
	return "~"
}

func (c PlacementChange) requestedShown() string {
	shown := make([]string, len(c.Requested))
	for i, q := range c.Requested {
		shown[i] = shownRequest(q)
	}
	return "naming " + strings.Join(shown, " or ")
}

// shownRequest is a requested queue as diff names it: an unconfigured name
// stands for all of them.
func shownRequest(q string) string {
	if q == "" {
		return "no queue"
	}
	return q
}

// namespaces names the namespaces of a placement row.
func (c PlacementChange) namespaces() string {
	if len(c.Namespaces) == 1 {
		return "namespace " + c.Namespaces[0]
	}
	return "namespaces " + strings.Join(c.Namespaces, ",")
}

// Subject is who a placement row places: "alice", "alice in ml,dev",
// "group ops", "groups ops,dev", "anyone else"; users alike follow.
func (c PlacementChange) Subject() string {
	if c.as != nil {
		return Subject{User: c.User, Groups: c.Groups, as: true}.String()
	}
	var named []string
	for _, g := range c.Groups {
		if g != c.AnyGroup {
			if a := c.AlsoGroups[g]; len(a) > 0 {
				g += "|" + strings.Join(a, "|")
			}
			named = append(named, g)
		}
	}
	var s string
	switch {
	case c.AnyUser && c.AllGroups:
		s = "anyone"
	case c.AllGroups:
		s = c.User + " in any groups"
	case c.AnyUser && len(named) == 0:
		s = "anyone else"
	case c.AnyUser && len(named) == 1:
		s = "group " + named[0]
	case c.AnyUser:
		s = "groups " + strings.Join(named, ",")
	case len(named) == 0:
		s = c.User
	default:
		s = c.User + " in " + strings.Join(named, ",")
	}
	if len(c.AlsoUsers) > 0 {
		s += " (and " + count(len(c.AlsoUsers), "user") + " alike: " + strings.Join(c.AlsoUsers, ",") + ")"
	}
	return s
}

func (p Outcome) String() string {
	switch {
	case p.Allow:
		return p.Queue + " (rule " + p.Rule + ")"
	case p.Message != "":
		return "rejected: " + oneLine(p.Message)
	}
	return "rejected"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// MarkdownRows bounds each Markdown table: a pull-request comment holds
// at most 65,536 characters on GitHub, and a reviewer reads the first
// rows; the heading counts them all.
const MarkdownRows = 50

// writeMarkdown writes a pull-request comment: a heading that counts the
// changes, the refusals, then a table of access changes and one of
// placement changes.
func (r *Result) writeMarkdown(w io.Writer) {
	if !r.Changed() {
		fmt.Fprintln(w, "### aclc diff: no change")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Who may submit to and administer each queue, and where applications land, stay the same.")
		return
	}
	var counts []string
	if !r.Valid.New {
		counts = append(counts, "NEW is refused by YuniKorn")
	} else if !r.Valid.Old {
		counts = append(counts, "OLD is refused by YuniKorn")
	}
	if len(r.Queues) > 0 {
		counts = append(counts, count(len(r.Queues), "queue added or removed", "queues added or removed"))
	}
	if len(r.Access) > 0 {
		counts = append(counts, count(len(r.Access), "access change"))
	}
	if len(r.Placement) > 0 {
		counts = append(counts, count(len(r.Placement), "placement change"))
	}
	fmt.Fprintf(w, "### aclc diff: %s\n", strings.Join(counts, ", "))
	if len(r.Valid.Errors) > 0 {
		fmt.Fprintln(w)
		if !r.Valid.New {
			fmt.Fprintln(w, "YuniKorn refuses NEW and keeps running its current configuration:")
		} else {
			fmt.Fprintln(w, "YuniKorn refuses OLD, so there are no decisions to compare:")
		}
		fmt.Fprintln(w)
		for _, e := range r.Valid.Errors {
			fmt.Fprintf(w, "- %s: %s\n", strings.ToUpper(e.Side), mdCell(e.located()))
		}
	}
	if len(r.Queues) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "#### Queues")
		fmt.Fprintln(w)
		for _, c := range r.Queues {
			fmt.Fprintf(w, "- `%s` %s\n", qualified(c.Partition, c.Queue), c.Change)
		}
	}
	if len(r.Access) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "#### Access")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| change | queue | action | subject | before | after |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
		for i, c := range r.Access {
			if i == MarkdownRows {
				fmt.Fprintf(w, "\n…and %s; `aclc diff` lists them all.\n", count(len(r.Access)-i, "more access change"))
				break
			}
			change := "lost"
			if c.New {
				change = "gained"
			}
			where := "`" + qualified(c.Partition, c.Queue) + "`"
			if c.InheritedBy > 0 {
				where += " and " + count(c.InheritedBy, "queue") + " below it"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", change, where, c.Action, mdCell(c.Subject.String()),
				mdCell(verdict(c.Old)+": "+c.OldReason), mdCell(verdict(c.New)+": "+c.NewReason))
		}
	}
	if len(r.Placement) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "#### Placement (partition default)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| change | namespace | subject | queue named | before | after |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
		for i, c := range r.Placement {
			if i == MarkdownRows {
				fmt.Fprintf(w, "\n…and %s; `aclc diff` lists them all.\n", count(len(r.Placement)-i, "more placement change"))
				break
			}
			change := map[string]string{"+": "placed", "-": "rejected", "~": "moved"}[c.Sign()]
			var names []string
			for _, q := range c.Requested {
				if q == "" {
					names = append(names, "(none)")
				} else {
					names = append(names, "`"+q+"`")
				}
			}
			named := strings.Join(names, ", ")
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", change, strings.Join(c.Namespaces, ", "), mdCell(c.Subject()), named, mdCell(c.Old.String()), mdCell(c.New.String()))
		}
	}
}

// mdCell makes text safe in a Markdown table cell: one line, pipes
// escaped.
// MDCell is s as one Markdown table cell: one line, pipes escaped.
func MDCell(s string) string { return mdCell(s) }

func mdCell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// count is n with its noun, singular for one (text.Count).
var count = text.Count

// Qualified is a queue path as aclc prints it: the partition's name before
// it unless it is the default partition.
func Qualified(partition, path string) string { return qualified(partition, path) }

// Verdict is "allow" or "deny".
func Verdict(b bool) string { return verdict(b) }

func qualified(partition, path string) string {
	if partition == "default" {
		return path
	}
	return partition + ":" + path
}

func verdict(b bool) string {
	if b {
		return "allow"
	}
	return "deny"
}

// writeJSON prints v as indented JSON, with <, > and & left as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
