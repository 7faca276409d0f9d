package serve

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/internal/inputfile"
)

// TestBundleThatIsNotAFile pins that --bundle naming a named pipe is
// refused at once, naming the path and what it is: reading it would wait
// for a writer that never comes.
func TestBundleThatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := New(context.Background(), NewConfig().WithAddr("127.0.0.1:0").WithBundle(fifo).WithLogOutput(io.Discard))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), fifo+" is a named pipe, not a regular file") {
			t.Fatalf("New = %v, want the named pipe refused", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("still reading the bundle after a minute")
	}
}
