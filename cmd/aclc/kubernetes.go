package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// writeKubernetes writes the admission policies of s (--target
// kubernetes): one YAML stream to a file or standard output, or one object
// per file into a directory, as the gatekeeper target.
func (o *buildOptions) writeKubernetes(cmd *cobra.Command, s *translate.Sources) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, d := range o.decisions {
		if !slices.Contains(translate.GatekeeperDecisions(), d) {
			return usageErr(cmd, "unknown --decisions value %q (want %s)", d, strings.Join(translate.GatekeeperDecisions(), ", "))
		}
	}
	if cmd.Flags().Changed("name") {
		if why := translate.CheckKubernetesName(o.name); why != "" {
			return usageErr(cmd, "--name %q: %s", o.name, why)
		}
	}
	opts := translate.KubernetesOptions{Name: o.name, Decisions: o.decisions}
	objs, err := translate.KubernetesObjectsOf(s, opts)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	for _, note := range translate.KubernetesLimitsOf(s, opts) {
		errorf(stderr, "build: note: %s", note)
	}
	big, err := translate.KubernetesServerSideOnly(objs)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	if len(big) > 0 {
		// kubectl apply without --server-side would create the bindings
		// and refuse these policies (metadata.annotations: Too long),
		// leaving the check silently off.
		errorf(stderr, "build: note: %s: larger than the %d bytes client-side kubectl apply keeps in its annotation; apply with kubectl apply --server-side (or Helm, Argo CD, Flux)", strings.Join(big, ", "), translate.KubernetesMaxClientApplyBytes)
	}
	files := make([]yamlObject, len(objs))
	for i, obj := range objs {
		files[i] = obj
	}
	return writeManifests(o.out, files, "Kubernetes admission policies "+translate.KubernetesSummary(objs), stdout, stderr)
}
