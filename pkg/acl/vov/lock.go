package vov

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrLocked is returned when another editor holds a source's lock for
// longer than LockFor waits.
var ErrLocked = errors.New("another aclc vovacl is editing this source")

// LockTimeout is how long LockForEdit waits for another editor.
const LockTimeout = 10 * time.Second

// LockForEdit takes an exclusive advisory lock (flock) on the directory of
// the source at path, so that editors which read, change and replace the
// file run one after another instead of each writing over the other's
// edit. The file itself cannot carry the lock: an edit replaces it by a
// rename, and a lock on the old inode would no longer guard the path. Open
// the document after taking the lock, so that the edit starts from the
// last one written. unlock releases the lock.
func LockForEdit(path string) (unlock func(), err error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("lock VOV ACL source: %w", err)
	}
	dir, err := os.Open(filepath.Dir(real))
	if err != nil {
		return nil, fmt.Errorf("lock VOV ACL source: %w", err)
	}
	deadline := time.Now().Add(LockTimeout)
	for {
		err := syscall.Flock(int(dir.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(dir.Fd()), syscall.LOCK_UN)
				dir.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			dir.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: %s (waited %s)", ErrLocked, real, LockTimeout)
			}
			return nil, fmt.Errorf("lock VOV ACL source: %w", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// owner is a file's user and group.
type owner struct {
	uid, gid int
	known    bool
}

func ownerOf(fi os.FileInfo) owner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return owner{uid: int(st.Uid), gid: int(st.Gid), known: true}
	}
	return owner{}
}
