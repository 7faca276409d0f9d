package translate

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileAtomicWritesIntoANamedPipe: an output that is a named pipe
// (or a device, such as /dev/null) is written into, and stays what it is;
// a rename over it would have put a plain file in its place.
func TestWriteFileAtomicWritesIntoANamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	done := make(chan error, 1)
	go func() { done <- WriteFileAtomic(fifo, []byte("bundle bytes")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no write into the named pipe within a minute")
	}
	st, err := os.Lstat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is %v after the write, want the named pipe it was", fifo, st.Mode())
	}
	select {
	case b := <-got:
		if string(b) != "bundle bytes" {
			t.Errorf("the reader got %q, want %q", b, "bundle bytes")
		}
	case <-time.After(time.Minute):
		t.Fatal("the reader got nothing within a minute")
	}
}

// TestWriteFileAtomicReplacesARegularFile: a regular file is replaced whole,
// keeping its mode.
func TestWriteFileAtomicReplacesARegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.tar.gz")
	if err := os.WriteFile(p, []byte("old and longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new" {
		t.Fatalf("read %q, %v; want %q", b, err, "new")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", st.Mode().Perm())
	}
}
