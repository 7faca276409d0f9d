package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/aclc-dev/aclc/pkg/diff"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// isVOVSide reports whether every source of a side is a VOV ACL source or
// a vovacl script, read by content as the VOV family claims them.
func (cl *commandLine) isVOVSide(srcs []string) bool {
	if len(srcs) == 0 {
		return false
	}
	for _, p := range srcs {
		var data []byte
		var err error
		if p == "-" {
			data, err = cl.readStdin()
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
	if o.cluster.enabled || !o.isVOVSide(oldSrcs) || !o.isVOVSide(newSrcs) {
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
		s, err := o.readSourceFiles(side, translate.KindVOV)
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
	if err := diff.WriteVOV(stdout, o.output, changes); err != nil {
		errorf(stderr, "%v", err)
		return exitUsage, true
	}
	if len(changes) > 0 {
		return exitError, true
	}
	return exitOK, true
}
