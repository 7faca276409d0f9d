// Package reload watches source files and directories and calls back when
// their content has changed and settled. It polls rather than subscribing
// to file events: a Kubernetes ConfigMap volume changes by swapping a
// symlink, and network file systems send no events.
//
// A poll compares a cheap stamp of every file (size, modification and
// change times, inode), following symlinks, and of every entry of a
// directory (a mounted ConfigMap). The change time and the inode catch what
// the modification time alone misses: cp -p, rsync -t and tar keep mtime,
// and a same-size rewrite keeps the size. A changed stamp must hold for
// one more poll (the writer may not be done); then the content is hashed,
// and the callback runs only when the hash differs from the content last
// loaded, so touching a file reloads nothing. A writer that does not
// replace files atomically (rename) can still be caught between truncating
// and writing if it pauses for longer than a poll interval.
//
// Only regular files (and symlinks to them) are read when hashing: a named
// pipe, a device or a file over MaxHashed contributes its type or its
// stamp instead of its content, so a watched path swapped for a FIFO or
// /dev/zero cannot hang the poll; the load that follows refuses it with
// its own error.
package reload

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aclc-dev/aclc/internal/inputfile"
)

// MaxHashed bounds what is read of one file to hash it: more than any
// source, groups file or bundle aclc loads. A larger file is hashed by its
// stamp, which still changes when it does.
const MaxHashed = 1 << 30

// Watcher watches a set of paths. Run owns it; Add and Paths may be
// called from any goroutine.
type Watcher struct {
	mu     sync.Mutex // guards paths
	paths  []string
	stamp  string   // of the content last loaded or tried
	sum    [32]byte // of the content last loaded successfully
	loaded bool
	// failed: the last load failed, so the caller reports a failure until
	// a load succeeds, even one of the bytes in service again.
	failed bool
}

// New takes the paths as they are now as the content in service.
func New(paths []string) *Watcher {
	w := &Watcher{paths: append([]string(nil), paths...)}
	w.stamp = Stamp(w.paths)
	w.sum, w.loaded = Sum(w.paths), true
	return w
}

// Add watches more paths, such as the groups file or the LDAP secret
// directory a load turned out to read. Paths watched already are skipped.
// The content last loaded is left as it was: when a path is new, the next
// polls see a change and load once more, which reads the new paths again,
// so a change made between the load and Add is not missed.
func (w *Watcher) Add(paths ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range paths {
		if p != "" && !slices.Contains(w.paths, p) {
			w.paths = append(w.paths, p)
		}
	}
}

// Paths are the paths watched.
func (w *Watcher) Paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.paths...)
}

// Run polls every interval until ctx is done. When the content has changed
// and settled it calls load; an error leaves the content in service as it
// was (the caller keeps its last good state), and the next change tries
// again. A change back to the bytes in service loads nothing, unless the
// last load failed: then it loads once more, and the caller, which sees
// what it serves again, clears its failure.
func (w *Watcher) Run(ctx context.Context, interval time.Duration, load func() error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	seen := w.stamp
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		paths := w.Paths()
		cur := Stamp(paths)
		if cur != seen {
			seen = cur // changed since the last look: let it settle
			continue
		}
		if cur == w.stamp {
			continue
		}
		sum := Sum(paths)
		if Stamp(paths) != cur {
			seen = "" // written while it was read: look again
			continue
		}
		w.stamp = cur
		if w.loaded && sum == w.sum && !w.failed {
			continue // same bytes: a touch, a copy of the same file
		}
		if load() == nil {
			w.sum, w.loaded, w.failed = sum, true, false
		} else {
			w.failed = true
		}
	}
}

// Stamp renders the stamps of the paths; directories contribute each
// entry that is not a kubelet ..* entry, following symlinks.
func Stamp(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		stampOne(&b, p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			for _, e := range entries(p) {
				stampOne(&b, e)
			}
		}
	}
	return b.String()
}

func stampOne(b *strings.Builder, p string) {
	b.WriteString(p)
	b.WriteByte(0)
	st, err := os.Stat(p)
	if err != nil {
		b.WriteString("absent\n")
		return
	}
	var ino, ctime, ctimeNS int64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino, ctime, ctimeNS = int64(sys.Ino), sys.Ctim.Sec, sys.Ctim.Nsec
	}
	b.WriteString(strings.Join([]string{
		itoa(st.Size()), itoa(st.ModTime().UnixNano()), itoa(ctime), itoa(ctimeNS), itoa(ino), st.Mode().String(),
	}, " "))
	b.WriteByte('\n')
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// entries lists a directory's files as a mounted ConfigMap has them,
// sorted, without ..* entries.
func entries(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), "..") {
			continue
		}
		out = append(out, filepath.Join(dir, de.Name()))
	}
	sort.Strings(out)
	return out
}

// Sum hashes the content of the paths (and of a directory's entries).
// What is not a regular file of at most MaxHashed bytes is hashed by what
// it is, never read.
func Sum(paths []string) [32]byte {
	h := sha256.New()
	add := func(p string) {
		h.Write([]byte(p))
		h.Write([]byte{0})
		st, err := os.Stat(p)
		switch {
		case err != nil:
			h.Write([]byte("absent"))
			return
		case st.IsDir():
			h.Write([]byte("dir"))
			return
		}
		if _, err := inputfile.Copy(h, p, MaxHashed); err != nil {
			// Not content: the type and stamp, so that a change of
			// either is seen and the load says what is wrong.
			var b strings.Builder
			stampOne(&b, p)
			h.Write([]byte("unread\x00" + b.String()))
		}
		h.Write([]byte{0})
	}
	for _, p := range paths {
		add(p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			for _, e := range entries(p) {
				add(e)
			}
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
