// Package readfile opens the files that the commands and the library read
// from paths a user names: regular files only (symbolic links followed),
// of at most a size limit each caller sets. Opening a FIFO blocks until a
// writer comes, and a device such as /dev/zero never ends, so the path is
// checked before it is opened, opened without waiting, and the opened file
// checked again (the path may have been replaced in between).
package readfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// ErrNotRegular and ErrTooLarge are what an *Error is (errors.Is): a path
// that is not a regular file, and a file above the caller's limit.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("larger than the limit")
)

// Error is a file refused before any of it is read: not a regular file
// (Mode holds its type), or Size bytes, more than Limit.
type Error struct {
	Path        string
	Mode        fs.FileMode
	Size, Limit int64
}

// Error is one line naming the file and what is wrong with it.
func (e *Error) Error() string {
	if !e.Mode.IsRegular() {
		return fmt.Sprintf("%s: %v (%s)", e.Path, ErrNotRegular, Kind(e.Mode))
	}
	return fmt.Sprintf("%s: %d bytes, more than the limit of %d", e.Path, e.Size, e.Limit)
}

// Is reports whether target is ErrNotRegular or ErrTooLarge, as the case
// may be.
func (e *Error) Is(target error) bool {
	if !e.Mode.IsRegular() {
		return target == ErrNotRegular
	}
	return target == ErrTooLarge
}

// Kind names the type of a file of mode m, with its article: "a
// directory", "a named pipe (FIFO)", "a character device", "a regular
// file"...
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}

// check refuses what Open does not open.
func check(path string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return &Error{Path: path, Mode: st.Mode().Type()}
	}
	if st.Size() > limit {
		return &Error{Path: path, Size: st.Size(), Limit: limit}
	}
	return nil
}

// Open opens path for reading if it is a regular file of at most limit
// bytes (math.MaxInt64: any size) and returns the file and its size.
// Anything else is refused before a byte is read: with an *Error when it
// is not a regular file or is too large, with the *fs.PathError of
// os.Stat or os.Open when it cannot be opened (errors.Is(err,
// fs.ErrNotExist) for a missing file). A file that grows after Open is
// the caller's to bound: Read reads at most limit bytes.
func Open(path string, limit int64) (*os.File, int64, error) {
	st, err := os.Stat(path) // opening a FIFO to look would block
	if err != nil {
		return nil, 0, err
	}
	if err := check(path, st, limit); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	if st, err = f.Stat(); err == nil {
		err = check(path, st, limit)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// Read returns the contents of path if it is a regular file of at most
// limit bytes (see Open for the errors). A file that grows past limit
// while it is read is refused with an *Error too.
func Read(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	b.Grow(int(min(size, math.MaxInt32-1)) + 1)
	if _, err := b.ReadFrom(io.LimitReader(f, max(limit+1, limit))); err != nil { // limit+1 overflows at math.MaxInt64
		return nil, err
	}
	if n := int64(b.Len()); n > limit {
		return nil, &Error{Path: path, Size: n, Limit: limit}
	}
	return b.Bytes(), nil
}
