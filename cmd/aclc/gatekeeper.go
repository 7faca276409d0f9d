package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

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
	objs, err := translate.GatekeeperObjects(s, translate.GatekeeperOptions{Decisions: o.decisions})
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	if why := translate.GatekeeperQueueLeftOut(s); why != "" && o.decisions == nil {
		errorf(stderr, "build: note: %s", why)
	}
	files := make([]yamlObject, len(objs))
	for i, obj := range objs {
		files[i] = obj
	}
	return writeManifests(o.out, files, "Gatekeeper "+translate.GatekeeperSummary(objs), stdout, stderr)
}

// yamlObject is one Kubernetes object a build writes as YAML.
type yamlObject interface {
	FileName() string
	YAML() ([]byte, error)
}

// writeManifests writes the objects of a Kubernetes build (gatekeeper,
// kubernetes): one YAML stream to a file or standard output (-), or one
// object per file, <kind>-<name>.yaml, into a directory. what names the
// objects in the summary line.
func writeManifests(out string, objs []yamlObject, what string, stdout, stderr io.Writer) int {
	if isOutputDir(out) {
		files := make([]outFile, len(objs))
		for i, obj := range objs {
			doc, err := obj.YAML()
			if err != nil {
				errorf(stderr, "build: %v", err)
				return exitError
			}
			files[i] = outFile{name: obj.FileName(), data: doc}
		}
		if err := writeDir(out, files); err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		fmt.Fprintf(stdout, "wrote %d files to %s (%s)\n", len(files), out, what)
		return exitOK
	}
	var buf bytes.Buffer
	for i, obj := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		doc, err := obj.YAML()
		if err != nil {
			errorf(stderr, "build: %v", err)
			return exitError
		}
		buf.Write(doc)
	}
	if err := writeOutput(out, buf.Bytes(), stdout); err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	if out != "-" {
		fmt.Fprintf(stdout, "wrote %s (%s; %d bytes)\n", out, what, buf.Len())
	}
	return exitOK
}

// isOutputDir: --output-file names a directory when it ends with a slash or is one.
func isOutputDir(out string) bool {
	if out == "-" {
		return false
	}
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return true
	}
	st, err := os.Stat(out)
	return err == nil && st.IsDir()
}

type outFile struct {
	name string
	data []byte
}

// writeDir writes files into dir, creating dir (not its parents) when
// missing. Every file is first written beside its destination under a
// temporary name, and the renames come last: a failure leaves none of the
// new files behind.
func writeDir(dir string, files []outFile) error {
	dir = filepath.Clean(dir)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot write %s: %w", dir, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("cannot write %s: not a directory", dir)
	}
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}()
	for _, f := range files {
		dst := filepath.Join(dir, f.name)
		if st, err := os.Lstat(dst); err == nil && !st.Mode().IsRegular() {
			return fmt.Errorf("cannot write %s: it is not a regular file", dst)
		}
		tmp, err := os.CreateTemp(dir, ".aclc-*")
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", dst, err)
		}
		tmps = append(tmps, tmp.Name())
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
			return fmt.Errorf("cannot write %s: %w", dst, err)
		}
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], filepath.Join(dir, f.name)); err != nil {
			return fmt.Errorf("cannot write %s: %w", filepath.Join(dir, f.name), err)
		}
	}
	return nil
}
