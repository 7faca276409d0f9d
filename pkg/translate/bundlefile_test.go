package translate

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

// TestReadBundleRefusesWhatIsNotAFile pins that a bundle path naming a
// named pipe or a device is refused at once, naming the path and what it
// is, where reading it would wait for a writer or never end.
func TestReadBundleRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{
		fifo:        fifo + " is a named pipe, not a regular file",
		"/dev/zero": "/dev/zero is a character device, not a regular file",
	} {
		if _, err := os.Stat(path); err != nil {
			t.Skip(err)
		}
		done := make(chan error, 1)
		go func() { _, err := ReadBundle(path); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadBundle(%s) = %v, want %q", path, err, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("ReadBundle(%s) still reading after a minute", path)
		}
	}
}
