package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guard fails the test when f does not return in a minute: without the
// non-blocking open and the type check, reading a named pipe waits forever
// and /dev/zero never ends.
func guard(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute")
	}
}

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "groups")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("dev:x:1:sue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The kubelet's layout: key -> ..data/key, ..data -> ..<timestamp>.
	stamped := filepath.Join(dir, "..2024_01_01")
	if err := os.Mkdir(stamped, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stamped, "key"), []byte("v"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..2024_01_01", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/key", filepath.Join(dir, "key")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("groups", filepath.Join(dir, "to-fifo")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
		is               error
	}{
		{"a regular file is read", regular, "", nil},
		{"a symlink chain to a regular file is read (kubelet layout)", filepath.Join(dir, "key"), "", nil},
		{"a named pipe is refused at once", fifo, fifo + " is a named pipe, not a regular file", ErrNotRegular},
		{"a symlink to a named pipe is refused at once", filepath.Join(dir, "to-fifo"), "to-fifo is a named pipe", ErrNotRegular},
		{"a directory is refused", dir, dir + " is a directory, not a regular file", ErrNotRegular},
		{"a character device is refused", "/dev/zero", "/dev/zero is a character device, not a regular file", ErrNotRegular},
		{"a file over the bound is refused before it is read", regular, "12 bytes: larger than aclc reads for it (8 bytes)", ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			max := int64(1 << 20)
			if tc.is == ErrTooLarge {
				max = 8
			}
			if tc.path == "/dev/zero" {
				if _, err := os.Stat(tc.path); err != nil {
					t.Skip(err)
				}
			}
			var err error
			guard(t, func() { _, err = ReadFile(tc.path, max) })
			if tc.is == nil {
				if err != nil {
					t.Fatalf("ReadFile: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadFile = %v, want %q (%v)", err, tc.want, tc.is)
			}
			var cerr error
			guard(t, func() { _, cerr = Copy(discard{}, tc.path, max) })
			if !errors.Is(cerr, tc.is) {
				t.Errorf("Copy = %v, want %v", cerr, tc.is)
			}
			if err := Check(tc.path, max); !errors.Is(err, tc.is) {
				t.Errorf("Check = %v, want %v", err, tc.is)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestSizeSpellsBounds(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 3<<20 + 1: "3145729 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
