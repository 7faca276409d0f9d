package main

import (
	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// writeKubernetes writes the admission policies of s (--target
// kubernetes): one YAML stream to a file or standard output, or one object
// per file into a directory, as the gatekeeper target.
func (o *buildOptions) writeKubernetes(cmd *cobra.Command, s *translate.Sources) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	objs, err := translate.KubernetesObjects(s)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	for _, note := range translate.KubernetesLimits(s) {
		errorf(stderr, "build: note: %s", note)
	}
	files := make([]yamlObject, len(objs))
	for i, obj := range objs {
		files[i] = obj
	}
	return writeManifests(o.out, files, "Kubernetes admission policies "+translate.KubernetesSummary(objs), stdout, stderr)
}
