package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/target/gatekeeper"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// writeGatekeeper writes the Gatekeeper objects of s: one YAML stream to a
// file or standard output, or one object per file into a directory.
func (o *buildOptions) writeGatekeeper(cmd *cobra.Command, s *translate.Sources) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, d := range o.decisions {
		if !slices.Contains(translate.GatekeeperDecisions(), d) {
			return usageErr(cmd, "unknown --decisions value %q (want %s)", d, strings.Join(translate.GatekeeperDecisions(), ", "))
		}
	}
	objs, err := gatekeeper.Objects(s, gatekeeper.Options{Decisions: o.decisions})
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	if why := gatekeeper.QueueLeftOut(s); why != "" && o.decisions == nil {
		errorf(stderr, "build: note: %s", why)
	}
	files := make([]yamlObject, len(objs))
	for i, obj := range objs {
		files[i] = obj
	}
	return writeManifests(o.out, files, "Gatekeeper "+gatekeeper.Summary(objs), stdout, stderr)
}

// yamlObject is one Kubernetes object a build writes as YAML.
type yamlObject = target.Object

// writeManifests writes the objects of a Kubernetes build (gatekeeper,
// kubernetes) with target.WriteObjects; what names the objects in the
// summary line.
func writeManifests(out string, objs []yamlObject, what string, stdout, stderr io.Writer) int {
	summary, err := target.WriteObjects(out, objs, what, stdout)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	if summary != "" {
		fmt.Fprintln(stdout, summary)
	}
	return exitOK
}
