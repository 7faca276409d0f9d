package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
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
		if why := kubernetes.CheckName(o.name); why != "" {
			return usageErr(cmd, "--name %q: %s", o.name, why)
		}
	}
	if o.staticDir != "" && !target.IsDir(o.out) {
		return usageErr(cmd, "--static-manifests writes a directory: give --output-file DIR/")
	}
	opts := kubernetes.Options{Name: o.name, Decisions: o.decisions}
	objs, err := kubernetes.Objects(s, opts)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	for _, note := range kubernetes.LimitsOf(s, opts) {
		errorf(stderr, "build: note: %s", note)
	}
	big, err := kubernetes.ServerSideOnly(objs)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	// Static manifests are read from files, never applied with kubectl.
	if len(big) > 0 && o.staticDir == "" {
		// kubectl apply without --server-side would create the bindings
		// and refuse these policies (metadata.annotations: Too long); the
		// queue check's in-force policy then refuses what it would check.
		errorf(stderr, "build: note: %s: more than the %d bytes client-side kubectl apply can record in its last-applied-configuration annotation (the API server would refuse the object); apply with kubectl apply --server-side (or Helm, Argo CD, Flux)", strings.Join(big, ", "), kubernetes.MaxClientApplyBytes)
	}
	if o.staticDir != "" {
		return writeKubernetesStatic(o.out, o.staticDir, objs, stdout, stderr)
	}
	files := make([]yamlObject, len(objs))
	for i, obj := range objs {
		files[i] = obj
	}
	return writeManifests(o.out, files, "Kubernetes admission policies "+kubernetes.Summary(objs), stdout, stderr)
}

// writeKubernetesStatic writes objs into out laid out for the API server to
// load from staticDir at start: out/admission-configuration.yaml, and one
// file per object in out/validating and out/mutating, which are to be
// copied to staticDir on the control-plane hosts.
func writeKubernetesStatic(out, staticDir string, objs []kubernetes.Object, stdout, stderr io.Writer) int {
	l, err := kubernetes.Static(objs, staticDir)
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	type dir struct {
		name  string
		files []target.File
	}
	dirs := []dir{{out, []target.File{{Name: "admission-configuration.yaml", Data: l.AdmissionConfiguration}}}}
	for _, d := range []struct {
		name string
		objs []kubernetes.Object
	}{{"validating", l.Validating}, {"mutating", l.Mutating}} {
		if len(d.objs) == 0 {
			continue
		}
		var files []target.File
		for _, obj := range d.objs {
			doc, err := obj.YAML()
			if err != nil {
				errorf(stderr, "build: %v", err)
				return exitError
			}
			files = append(files, target.File{Name: obj.FileName(), Data: doc})
		}
		dirs = append(dirs, dir{filepath.Join(out, d.name), files})
	}
	n := 0
	for _, d := range dirs {
		if err := target.WriteDir(d.name, d.files); err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		n += len(d.files)
	}
	fmt.Fprintf(stdout, "wrote %d files to %s (static admission manifests for %s: --admission-control-config-file=%s)\n",
		n, out, staticDir, filepath.Join(staticDir, "admission-configuration.yaml"))
	return exitOK
}
