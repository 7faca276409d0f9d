// Package inputfile reads the files aclc is given — sources, groups files,
// LDAP secret files — refusing at once anything that is not a regular file
// and anything larger than the caller's bound.
//
// # Notes
//
// A named pipe blocks its reader until a writer comes, and a device such as
// /dev/zero never ends, so neither may be read as configuration. Symlinks
// are followed: the kubelet mounts a ConfigMap or a Secret as symlinks into
// a timestamped directory, and a symlink to a regular file is a regular
// file here. The file is opened without blocking and its type checked on
// the open descriptor, so a path swapped between a check and the open
// cannot make the open hang; the read is limited too, since a file can
// grow between its stat and its read.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxSource bounds every source file aclc reads. A ConfigMap holds at most
// 1 MiB and the largest VOV project files are a few MiB; a larger file is
// refused before it is read, so that a stray dump cannot take a reload's
// memory.
const MaxSource = 64 << 20

// ErrNotRegular is returned, wrapped in an *Error, for a path that is a
// directory, a named pipe, a device or a socket where a file is expected.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned, wrapped in an *Error, for a file over the bound.
var ErrTooLarge = errors.New("file too large")

// Error is a file that was refused. Its text names the path and why, never
// the file's content.
type Error struct {
	Path string
	// Type is what the path is when it is not a regular file ("a named
	// pipe"); Size and Max are set for a file over the bound (Size is -1
	// when the file grew past Max while it was read).
	Type      string
	Size, Max int64
	Err       error // ErrNotRegular or ErrTooLarge
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrTooLarge) {
		if e.Size < 0 {
			return fmt.Sprintf("%s: more than %s: larger than aclc reads for it", e.Path, Size(e.Max))
		}
		return fmt.Sprintf("%s: %d bytes: larger than aclc reads for it (%s)", e.Path, e.Size, Size(e.Max))
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.Type)
}

func (e *Error) Unwrap() error { return e.Err }

// Size renders a byte count as the bounds are spelled: "4 MiB", "64 KiB",
// or bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// TypeName says what a file mode is, for messages: "a directory", "a named
// pipe", "a character device", ...; "a regular file" for a regular one.
func TypeName(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// Open opens path for reading when it is (or a symlink resolves to) a
// regular file of at most max bytes; otherwise it fails at once with an
// *Error. The caller must still limit what it reads (the file may grow):
// ReadFile does both.
func Open(path string, max int64) (*os.File, fs.FileInfo, error) {
	// O_NONBLOCK: opening a named pipe without a writer returns at once
	// instead of waiting for one. A regular file ignores the flag.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{Path: path, Type: TypeName(st.Mode()), Err: ErrNotRegular}
	}
	if st.Size() > max {
		f.Close()
		return nil, nil, &Error{Path: path, Size: st.Size(), Max: max, Err: ErrTooLarge}
	}
	return f, st, nil
}

// Check reports, without opening it, whether path is a regular file of at
// most max bytes, with the error Open would give.
func Check(path string, max int64) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &Error{Path: path, Type: TypeName(st.Mode()), Err: ErrNotRegular}
	}
	if st.Size() > max {
		return &Error{Path: path, Size: st.Size(), Max: max, Err: ErrTooLarge}
	}
	return nil
}

// ReadFile reads a regular file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, _, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &Error{Path: path, Size: -1, Max: max, Err: ErrTooLarge}
	}
	return data, nil
}

// Copy copies a regular file of at most max bytes to w, as ReadFile reads
// it, for a caller that hashes rather than keeps the content.
func Copy(w io.Writer, path string, max int64) (int64, error) {
	f, _, err := Open(path, max)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.Copy(w, io.LimitReader(f, max+1))
	if err != nil {
		return n, err
	}
	if n > max {
		return n, &Error{Path: path, Size: -1, Max: max, Err: ErrTooLarge}
	}
	return n, nil
}
