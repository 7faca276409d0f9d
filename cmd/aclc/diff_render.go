package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// write prints the result in the format asked for. Text with no change is
// empty, as diff prints nothing for equal files.
func (r *diffResult) write(w io.Writer, format string) error {
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

func (e diffError) located() string {
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
func (r *diffResult) refusalLines() []string {
	var out []string
	for _, e := range r.Valid.Errors {
		out = append(out, strings.ToUpper(e.Side)+" is refused by YuniKorn: "+oneLine(e.located()))
	}
	return out
}

func (r *diffResult) writeText(w io.Writer) {
	for _, l := range r.refusalLines() {
		fmt.Fprintln(w, l)
	}
	for _, c := range r.Access {
		sign, text := c.line()
		fmt.Fprintf(w, "%s %s\n", sign, text)
	}
	for _, c := range r.Placement {
		fmt.Fprintf(w, "%s %s\n", c.sign(), c.text("->"))
	}
}

// line is an access change as diff's text says it: its sign (+ gained,
// - lost) and "subject: action on queue (now/was: reason)".
func (c accessChange) line() (sign, text string) {
	sign, why := "-", "was: "+c.OldReason
	if c.New {
		sign, why = "+", "now: "+c.NewReason
	}
	return sign, fmt.Sprintf("%s: %s on %s (%s)", c.Subject, c.Action, c.where(), why)
}

// text is a placement change without its sign, old and new joined by
// arrow.
func (c placementChange) text(arrow string) string {
	return fmt.Sprintf("namespace %s: %s, %s: %s %s %s", c.Namespace, c.subject, requestedShown(c.Requested), c.Old, arrow, c.New)
}

// where names the queue of an access change, and the queues below that
// inherit it.
func (c accessChange) where() string {
	q := qualified(c.Partition, c.Queue)
	if c.InheritedBy > 0 {
		q += " and " + count(c.InheritedBy, "queue") + " below it"
	}
	return q
}

// sign is + for an application that is now placed, - for one now
// rejected, ~ for one that lands elsewhere or by another rule.
func (c placementChange) sign() string {
	switch {
	case c.New.Allow && !c.Old.Allow:
		return "+"
	case c.Old.Allow && !c.New.Allow:
		return "-"
	}
	return "~"
}

func requestedShown(q string) string {
	if q == "" {
		return "naming no queue"
	}
	return "naming " + q
}

func (p placementOutcome) String() string {
	switch {
	case p.Allow:
		return p.Queue + " (rule " + p.Rule + ")"
	case p.Message != "":
		return "rejected: " + oneLine(p.Message)
	}
	return "rejected"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// markdownRows bounds each Markdown table: a pull-request comment holds
// at most 65,536 characters on GitHub, and a reviewer reads the first
// rows; the heading counts them all.
const markdownRows = 50

// writeMarkdown writes a pull-request comment: a heading that counts the
// changes, the refusals, then a table of access changes and one of
// placement changes.
func (r *diffResult) writeMarkdown(w io.Writer) {
	if !r.changed() {
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
	if len(r.Access) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "#### Access")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| change | queue | action | subject | before | after |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
		for i, c := range r.Access {
			if i == markdownRows {
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
			if i == markdownRows {
				fmt.Fprintf(w, "\n…and %s; `aclc diff` lists them all.\n", count(len(r.Placement)-i, "more placement change"))
				break
			}
			change := map[string]string{"+": "placed", "-": "rejected", "~": "moved"}[c.sign()]
			named := "(none)"
			if c.Requested != "" {
				named = "`" + c.Requested + "`"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", change, c.Namespace, mdCell(c.subject.String()), named, mdCell(c.Old.String()), mdCell(c.New.String()))
		}
	}
}

// mdCell makes text safe in a Markdown table cell: one line, pipes
// escaped.
func mdCell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}
