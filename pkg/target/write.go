package target

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// Object is one Kubernetes object a target writes as YAML.
type Object interface {
	FileName() string
	YAML() ([]byte, error)
}

// FileName is an object's file in a directory build: <kind>-<name>.yaml,
// lower case, as gator suites and kustomize lay objects out.
func FileName(kind, name string) string {
	return strings.ToLower(kind) + "-" + name + ".yaml"
}

// WriteComment writes comment above an object, a "# " before each line.
func WriteComment(buf *bytes.Buffer, comment string) {
	for _, line := range strings.Split(comment, "\n") {
		if line != "" {
			fmt.Fprintf(buf, "# %s\n", line)
		}
	}
}

// WriteFile writes data to path, whole or not at all, or to stdout for
// "-".
func WriteFile(path string, data []byte, stdout io.Writer) error {
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	return translate.WriteFileAtomic(path, data)
}

// WriteObjects writes objects: one YAML stream to a file or standard
// output (-), or one object per file, <kind>-<name>.yaml, into a
// directory (IsDir). It returns the summary line, what naming the objects
// ("Gatekeeper ConstraintTemplate and Constraint"), "" for standard
// output.
func WriteObjects(out string, objs []Object, what string, stdout io.Writer) (summary string, err error) {
	if IsDir(out) {
		files := make([]File, len(objs))
		for i, obj := range objs {
			doc, err := obj.YAML()
			if err != nil {
				return "", err
			}
			files[i] = File{Name: obj.FileName(), Data: doc}
		}
		if err := WriteDir(out, files); err != nil {
			return "", err
		}
		return fmt.Sprintf("wrote %d files to %s (%s)", len(files), out, what), nil
	}
	var buf bytes.Buffer
	for i, obj := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		doc, err := obj.YAML()
		if err != nil {
			return "", err
		}
		buf.Write(doc)
	}
	if err := WriteFile(out, buf.Bytes(), stdout); err != nil {
		return "", err
	}
	if out == "-" {
		return "", nil
	}
	return fmt.Sprintf("wrote %s (%s; %d bytes)", out, what, buf.Len()), nil
}

// IsDir reports whether --output-file out names a directory: it ends
// with a slash, or is one.
func IsDir(out string) bool {
	if out == "-" {
		return false
	}
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return true
	}
	st, err := os.Stat(out)
	return err == nil && st.IsDir()
}

// File is one file WriteDir writes.
type File struct {
	Name string
	Data []byte
}

// WriteDir writes files into dir, creating dir (not its parents) when
// missing. Every file is first written beside its destination under a
// temporary name, and the renames come last: a failure leaves none of the
// new files behind.
func WriteDir(dir string, files []File) error {
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
		dst := filepath.Join(dir, f.Name)
		if st, err := os.Lstat(dst); err == nil && !st.Mode().IsRegular() {
			return fmt.Errorf("cannot write %s: it is not a regular file", dst)
		}
		tmp, err := os.CreateTemp(dir, ".aclc-*")
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", dst, err)
		}
		tmps = append(tmps, tmp.Name())
		_, werr := tmp.Write(f.Data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
			return fmt.Errorf("cannot write %s: %w", dst, err)
		}
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], filepath.Join(dir, f.Name)); err != nil {
			return fmt.Errorf("cannot write %s: %w", filepath.Join(dir, f.Name), err)
		}
	}
	return nil
}
