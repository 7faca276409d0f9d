package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeOutput writes data to path, or to stdout for "-". A file is written
// through a temporary file in the same directory and renamed into place, so
// a failed build never leaves half a bundle; a new file is 0644, as opa
// build writes it, and a replaced file keeps its mode.
func writeOutput(path string, data []byte, stdout io.Writer) error {
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	fail := func(err error) error { return fmt.Errorf("cannot write %s: %w", path, err) }
	dir := filepath.Dir(path)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	case err != nil:
		return fail(err)
	case !st.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("cannot write %s: it is a directory", path)
		}
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, ".aclc-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	return nil
}
