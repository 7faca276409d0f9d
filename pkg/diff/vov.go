package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
)

// WriteVOV writes the changes between two VOV sources (vov.Compare) as
// aclc diff does, in format text (a line per change: + gained, - lost),
// json ({"changes": [...]}) or markdown (a pull-request comment).
func WriteVOV(w io.Writer, format string, changes []vov.Change) error {
	if changes == nil {
		changes = []vov.Change{}
	}
	bw := bufio.NewWriter(w)
	switch format {
	case "json":
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"changes": changes}); err != nil {
			return err
		}
	case "markdown":
		writeVOVMarkdown(bw, changes)
	default:
		for _, c := range changes {
			sign, text := vovChangeLine(c)
			fmt.Fprintf(bw, "%s %s\n", sign, text)
		}
	}
	return bw.Flush()
}

// vovWho names the subject of a change, and the hosts it holds from.
func vovWho(c vov.Change) string {
	who := c.Subject
	if c.OSGroup != "" {
		who = "anyone in OS group " + c.OSGroup
	}
	if len(c.Hosts) > 0 {
		who += " from " + strings.Join(c.Hosts, ", ")
	}
	return who
}

// vovChangeLine is a change as diff's text says it: + gained, - lost,
// "subject: CAP on type "object" (now/was granted by ...)".
func vovChangeLine(c vov.Change) (sign, text string) {
	sign, when := "-", "was"
	if c.Gained {
		sign, when = "+", "now"
	}
	return sign, fmt.Sprintf("%s: %s on %s %q (%s %s)", vovWho(c), c.Capability, c.Type, c.Object, when, vovGrantedBy(c.Reason))
}

// vovGrantedBy is the part of a decision's reason that names the entries.
func vovGrantedBy(reason string) string {
	if i := strings.Index(reason, " granted by "); i >= 0 {
		return reason[i+1:]
	}
	return reason
}

func writeVOVMarkdown(w io.Writer, changes []vov.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "### aclc diff: no change")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Who holds which capability on each VOV object stays the same.")
		return
	}
	fmt.Fprintf(w, "### aclc diff: %s\n\n", count(len(changes), "capability change"))
	fmt.Fprintln(w, "| change | object | capability | subject | granted by |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for i, c := range changes {
		if i == MarkdownRows {
			fmt.Fprintf(w, "\n…and %s; `aclc diff` lists them all.\n", count(len(changes)-i, "more capability change"))
			break
		}
		change := "lost"
		if c.Gained {
			change = "gained"
		}
		fmt.Fprintf(w, "| %s | %s `%s` | %s | %s | %s |\n", change, c.Type, mdCell(c.Object), c.Capability, mdCell(vovWho(c)), mdCell(vovGrantedBy(c.Reason)))
	}
}
