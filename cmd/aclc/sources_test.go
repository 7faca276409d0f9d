package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
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
		{"a named pipe as the groups file", fifo + " is a named pipe, not a regular file", []string{"build", "--output-file", out, "--resolver", "file=" + fifo, queues}},
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

// TestFeedFollowsTheFilesALoadRead pins that a following feed (the
// webhook's) reloads when a path a load read besides the sources changes:
// the LDAP secret directory a configuration chooses.
func TestFeedFollowsTheFilesALoadRead(t *testing.T) {
	src := writeFile(t, "q.yaml", "partitions: []\n")
	secret := t.TempDir()
	write := func(content string) {
		t.Helper()
		tmp := filepath.Join(secret, "..Host.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(secret, "Host")); err != nil {
			t.Fatal(err)
		}
	}
	write("ldap-a.example.org")
	c := &clusterFlags{cl: newCommandLine(strings.NewReader(""))}
	f, err := c.feed(context.Background(), []string{src}, translate.KindAuto, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Watch(secret)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var loads atomic.Int64
	go f.Run(ctx, 5*time.Millisecond, func() error { loads.Add(1); return nil })
	wait := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); loads.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("loads = %d, want %d", loads.Load(), n)
			}
		}
	}
	wait(1) // the directory added after the start is read once more
	write("ldap-b.example.org")
	wait(2)
}
