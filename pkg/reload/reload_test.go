package reload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
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

// TestRunLoadsOnlyNewContent runs the watcher over a file: a touch loads
// nothing, new bytes load once, a failed load is tried again on the next
// change, and going back to the loaded bytes loads nothing.
func TestRunLoadsOnlyNewContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.yaml")
	// Replaced by a rename, as the kubelet and editors do: a writer that
	// truncates in place can be caught half-way on a loaded machine.
	write := func(s string) {
		t.Helper()
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	write("v1")
	w := New([]string{p})
	var loads atomic.Int64
	fail := atomic.Bool{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		w.Run(ctx, 20*time.Millisecond, func() error {
			loads.Add(1)
			if fail.Load() {
				return errors.New("broken")
			}
			return nil
		})
		close(done)
	}()
	settle := func() { time.Sleep(200 * time.Millisecond) }
	waitLoads := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); loads.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("loads = %d, want %d", loads.Load(), n)
			}
		}
	}
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil { // a touch
		t.Fatal(err)
	}
	settle()
	if n := loads.Load(); n != 0 {
		t.Fatalf("a touch loaded %d times", n)
	}
	fail.Store(true)
	write("v2")
	waitLoads(1)
	fail.Store(false)
	write("v3")
	waitLoads(2)
	write("v3") // the same bytes again
	settle()
	if n := loads.Load(); n != 2 {
		t.Errorf("rewriting the loaded bytes loaded again: %d loads", n)
	}
	cancel()
	<-done
}
