package reload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestStampSeesRewritesThatKeepSizeAndMtime pins the change detection that
// cp -p, rsync -t and tar need: same size, same modification time, other
// bytes.
func TestStampSeesRewritesThatKeepSizeAndMtime(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.yaml")
	if err := os.WriteFile(p, []byte("submitacl: sue"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	before, sumBefore := Stamp([]string{p}), Sum([]string{p})
	time.Sleep(10 * time.Millisecond) // a change time the file system can tell apart
	if err := os.WriteFile(p, []byte("submitacl: eve"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after := Stamp([]string{p}); after == before {
		t.Error("a same-size rewrite with its mtime kept leaves the stamp unchanged")
	}
	if Sum([]string{p}) == sumBefore {
		t.Error("the content hash did not change")
	}
}

// watched is a file under a running watcher whose loads are counted and
// fail while failing is set; stop ends the watcher.
type watched struct {
	t       *testing.T
	path    string
	loads   atomic.Int64
	failing atomic.Bool
	stop    func()
}

func watchFile(t *testing.T, content string) *watched {
	w := &watched{t: t, path: filepath.Join(t.TempDir(), "q.yaml")}
	w.write(content)
	wt := New([]string{w.path})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		wt.Run(ctx, 20*time.Millisecond, func() error {
			w.loads.Add(1)
			if w.failing.Load() {
				return errors.New("broken")
			}
			return nil
		})
		close(done)
	}()
	w.stop = func() { cancel(); <-done }
	return w
}

// write replaces the file by a rename, as the kubelet and editors do: a
// writer that truncates in place can be caught half-way on a loaded
// machine.
func (w *watched) write(s string) {
	w.t.Helper()
	tmp := w.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		w.t.Fatal(err)
	}
}

func (w *watched) waitLoads(n int64) {
	w.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); w.loads.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			w.t.Fatalf("loads = %d, want %d", w.loads.Load(), n)
		}
	}
}

// settle waits long enough for a change to have been loaded, were it one.
func settle() { time.Sleep(200 * time.Millisecond) }

// TestRunLoadsOnlyNewContent runs the watcher over a file: a touch loads
// nothing, new bytes load once, a failed load is tried again on the next
// change, and going back to the loaded bytes loads nothing.
func TestRunLoadsOnlyNewContent(t *testing.T) {
	w := watchFile(t, "v1")
	defer w.stop()
	now := time.Now()
	if err := os.Chtimes(w.path, now, now); err != nil { // a touch
		t.Fatal(err)
	}
	settle()
	if n := w.loads.Load(); n != 0 {
		t.Fatalf("a touch loaded %d times", n)
	}
	w.failing.Store(true)
	w.write("v2")
	w.waitLoads(1)
	w.failing.Store(false)
	w.write("v3")
	w.waitLoads(2)
	w.write("v3") // the same bytes again
	settle()
	if n := w.loads.Load(); n != 2 {
		t.Errorf("rewriting the loaded bytes loaded again: %d loads", n)
	}
}

// guard fails the test when f has not returned after a minute.
func guard(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("still hashing after a minute")
	}
}

// TestSumDoesNotReadWhatIsNotARegularFile pins that a watched path that is
// a named pipe or a device is hashed by what it is: opening a FIFO waits
// for a writer and /dev/zero never ends.
func TestSumDoesNotReadWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "groups")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	mounted := filepath.Join(dir, "mounted")
	if err := os.Mkdir(mounted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(mounted, "queues.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"a named pipe is not opened for reading", fifo},
		{"a named pipe in a mounted directory is not opened for reading", mounted},
		{"a character device is not read", "/dev/zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.path); err != nil {
				t.Skip(err)
			}
			var a, b [32]byte
			guard(t, func() {
				w := New([]string{tc.path})
				a, b = w.sum, Sum([]string{tc.path})
			})
			if a != b {
				t.Error("two hashes of the same unread path differ")
			}
		})
	}
}

// TestAddWatchesAPathALoadRead pins that a path added after the start (the
// groups file a load read) is watched: a change to it loads again.
func TestAddWatchesAPathALoadRead(t *testing.T) {
	dir := t.TempDir()
	src, groups := filepath.Join(dir, "q.yaml"), filepath.Join(dir, "groups")
	for _, p := range []string{src, groups} {
		if err := os.WriteFile(p, []byte("v1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := New([]string{src})
	w.Add(groups, src, "")
	if got := w.Paths(); len(got) != 2 {
		t.Fatalf("Paths() = %q, want the source and the groups file once each", got)
	}
	var loads atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx, 10*time.Millisecond, func() error { loads.Add(1); return nil })
	wait := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); loads.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("loads = %d, want %d", loads.Load(), n)
			}
		}
	}
	wait(1) // the added path is read once more
	tmp := groups + ".tmp"
	if err := os.WriteFile(tmp, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, groups); err != nil {
		t.Fatal(err)
	}
	wait(2)
}

// TestRunLoadsTheServedBytesAfterAFailure: a broken edit put back to the
// bytes in service loads once more, so that the caller clears the failure
// it reports; after that, the same bytes load nothing.
func TestRunLoadsTheServedBytesAfterAFailure(t *testing.T) {
	w := watchFile(t, "good")
	defer w.stop()
	w.failing.Store(true)
	w.write("broken")
	w.waitLoads(1)
	w.failing.Store(false)
	w.write("good") // the bytes in service, copied back
	w.waitLoads(2)
	w.write("good")
	settle()
	if n := w.loads.Load(); n != 2 {
		t.Errorf("the bytes in service loaded again after the failure was cleared: %d loads", n)
	}
}
