package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSourcesThatAreNotFilesAreRefusedAtOnce pins that a named pipe or a
// device given as a source or a groups file fails the command at once,
// naming the path and what it is: opening a FIFO waits for a writer and
// /dev/zero never ends.
func TestSourcesThatAreNotFilesAreRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "queues.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	queues := writeFile(t, "q.yaml", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: sue\n")
	out := filepath.Join(dir, "b.tar.gz")
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"a named pipe as a source", fifo + " is a named pipe, not a regular file", []string{"check", fifo}},
		{"a named pipe beside standard input", fifo + " is a named pipe, not a regular file", []string{"check", "-", fifo}},
		{"a character device as a source", "/dev/zero is a character device, not a regular file", []string{"check", "/dev/zero"}},
		{"a named pipe as the groups file", fifo + " is a named pipe, not a regular file", []string{"build", "-o", out, "--resolver", "file=" + fifo, queues}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat("/dev/zero"); err != nil && strings.Contains(tc.want, "/dev/zero") {
				t.Skip(err)
			}
			type result struct {
				code        int
				out, errout string
			}
			done := make(chan result, 1)
			go func() {
				code, o, e := runCLI(t, "", tc.args...)
				done <- result{code, o, e}
			}()
			select {
			case r := <-done:
				if r.code == 0 || !strings.Contains(r.out+r.errout, tc.want) {
					t.Fatalf("exit %d, output %q %q; want %q", r.code, r.out, r.errout, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("still reading after a minute")
			}
		})
	}
}
