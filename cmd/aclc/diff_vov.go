package main

import (
	"bufio"
	"fmt"
	"github.com/aclc-dev/aclc/pkg/diff"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// isVOVSide reports whether every source of a side is a VOV ACL source or
// a vovacl script, read by content as the VOV family claims them.
func isVOVSide(srcs []string) bool {
	if len(srcs) == 0 {
		return false
	}
	for _, p := range srcs {
		var data []byte
		var err error
		if p == "-" {
			data, err = readStdin()
		} else if st, serr := os.Stat(p); serr != nil || st.IsDir() {
			return false
		} else {
			data, err = translate.ReadSource(p)
		}
		if err != nil || !(vov.IsVOVSource(data) || vov.IsScript(data)) {
			return false
		}
	}
	return true
}

// runVOV compares two VOV sides, when both are: who gains or loses which
// capability on which object, as vov/acl/decision decides (vov.Compare).
// ok is false when the sides are not both VOV, and diff goes on as for
// YuniKorn.
func (o *diffOptions) runVOV(cmd *cobra.Command, oldSrcs, newSrcs []string) (code int, ok bool) {
	if o.cluster.enabled || !isVOVSide(oldSrcs) || !isVOVSide(newSrcs) {
		return 0, false
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch {
	case o.output == "html":
		return usageErr(cmd, "-o html draws a YuniKorn queue tree; VOV sources are compared as text, json or markdown"), true
	case cmd.Flags().Changed("engine") && o.engine != engine.Native:
		return usageErr(cmd, "--engine: VOV sources are compared by aclc's reference decision (native), which every engine matches"), true
	case len(o.as.list) > 0 || len(o.as.shared) > 0 || len(o.namespaces) > 0:
		return usageErr(cmd, "--as, --as-group and --app-namespace are for YuniKorn configurations; VOV sources are compared for every user they name"), true
	}
	var specs [2]*vov.Spec
	for i, side := range [][]string{oldSrcs, newSrcs} {
		s, err := readSourceFiles(side, translate.KindVOV)
		if err == nil && s.VOV() == nil {
			err = fmt.Errorf("%s: no VOV ACL source, only vovacl scripts", strings.Join(side, ", "))
		}
		if err != nil {
			errorf(stderr, "%s: %v", []string{"OLD", "NEW"}[i], err)
			return exitUsage, true
		}
		specs[i] = s.VOV()
	}
	changes := vov.Compare(specs[0], specs[1])
	if changes == nil {
		changes = []vov.Change{}
	}
	var err error
	switch o.output {
	case "json":
		err = writeJSON(stdout, map[string]any{"changes": changes})
	case "markdown":
		bw := bufio.NewWriter(stdout)
		writeVOVMarkdown(bw, changes)
		err = bw.Flush()
	default:
		bw := bufio.NewWriter(stdout)
		for _, c := range changes {
			sign, text := vovChangeLine(c)
			fmt.Fprintf(bw, "%s %s\n", sign, text)
		}
		err = bw.Flush()
	}
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage, true
	}
	if len(changes) > 0 {
		return exitError, true
	}
	return exitOK, true
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
		if i == diff.MarkdownRows {
			fmt.Fprintf(w, "\n…and %s; `aclc diff` lists them all.\n", count(len(changes)-i, "more capability change"))
			break
		}
		change := "lost"
		if c.Gained {
			change = "gained"
		}
		fmt.Fprintf(w, "| %s | %s `%s` | %s | %s | %s |\n", change, c.Type, diff.MDCell(c.Object), c.Capability, diff.MDCell(vovWho(c)), diff.MDCell(vovGrantedBy(c.Reason)))
	}
}
