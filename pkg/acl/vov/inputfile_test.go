package vov

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/internal/inputfile"
)

// TestFilesThatAreNotRegular pins that a security.tcl, a source or a
// vovacl spec naming a named pipe is refused at once, naming the path and
// what it is, where reading it would wait for a writer that never comes.
func TestFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "security.tcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	spec := filepath.Join(dir, "acls.yaml")
	if err := os.WriteFile(spec, []byte("vov:\n  owner: cadmin\n  security: security.tcl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fifo + " is a named pipe, not a regular file"
	for name, read := range map[string]func() error{
		"security.tcl is read by type on the file opened": func() error {
			_, err := Load(spec, []byte("vov:\n  owner: cadmin\n  security: security.tcl\n"))
			return err
		},
		"a source file":   func() error { _, err := LoadFile(fifo); return err },
		"a vovacl --spec": func() error { _, err := OpenDocument(fifo); return err },
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- read() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error = %v, want %q", err, want)
				}
				if !strings.HasPrefix(name, "security.tcl") && !errors.Is(err, inputfile.ErrNotRegular) {
					t.Errorf("error = %v, want inputfile.ErrNotRegular", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("still reading after a minute")
			}
		})
	}
}
