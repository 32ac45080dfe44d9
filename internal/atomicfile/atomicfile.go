// Package atomicfile replaces files atomically: the new contents go to a
// temporary file in the same directory, which is synced, given its
// permissions and renamed over the target, and the directory is synced.
// A reader sees the old file or the new one, never a partial one, and a
// crash leaves the old file in place (and possibly a temporary file, which
// RemoveStale deletes).
//
// Only regular files are written. A path that is a symbolic link is
// followed, and the file it leads to replaced (the link stays; a link to
// nothing yet gets its file created). A path that exists and is not a
// regular file (a directory, a FIFO, a device such as /dev/null, a
// socket, or a link to one, as /dev/stdout is to a terminal or a pipe) is
// refused before anything is written, and left as it is: replacing it
// would take the name away from what it was, and writing through it would
// lose the all-or-nothing guarantee.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/simdgpt/simdgpt/internal/readfile"
)

// Perm is the permission of the files written (os.CreateTemp's 0600 would
// hide a user's checkpoints and images from the other accounts that
// os.WriteFile's usual 0644 lets read them).
const Perm = 0o644

// Write replaces path with b.
func Write(path string, b []byte) error {
	return WriteFunc(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// tempPattern is the os.CreateTemp pattern of path's temporary files:
// ".<base>.tmp" and random digits.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".tmp*" }

// Check returns the error WriteFunc would return for path because of
// where path leads, nil if a write there can be made: it lets a command
// refuse an output file before its work rather than after. It follows
// path's symbolic links as WriteFunc does and refuses what WriteFunc
// would fail on: a loop of links, something other than a regular file at
// the end, and a file that cannot be created where the links lead (a
// missing directory, a dangling link into one, a directory that is not
// writable or not a directory), which it finds by creating and removing a
// temporary file there as WriteFunc would (one RemoveStale deletes, should
// the process die in between). What it cannot foresee is what changes
// after it returns, and the disk filling up.
func Check(path string) error {
	dst, err := target(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, cause(err))
	}
	f, err := os.CreateTemp(filepath.Dir(dst), tempPattern(dst))
	if err != nil {
		return createError(path, dst, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// createError is the error of a temporary file for path that could not
// be created beside dst, the file path leads to: it names the directory,
// and the link's target when path is a link.
func createError(path, dst string, err error) error {
	via := ""
	if dst != path {
		via = " (for " + dst + ", which it links to)"
	}
	return fmt.Errorf("write %s: %w", path, fmt.Errorf("cannot create a file in %s%s: %w", filepath.Dir(dst), via, cause(err)))
}

// CheckDir returns the error that creating the directory dir as
// os.MkdirAll does, or creating files in it, would meet, nil if both can
// be done: dir (or the nearest of its parents that exists, in which the
// rest would be made) must be a directory, or a link to one, in which a
// directory can be created; it finds that by creating and removing one.
// It lets a command refuse an output directory it creates later.
func CheckDir(dir string) error {
	p := dir
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == dir {
					return fmt.Errorf("create %s: it is %s, not a directory", dir, readfile.Kind(st.Mode()))
				}
				return fmt.Errorf("create %s: %s is %s, not a directory", dir, p, readfile.Kind(st.Mode()))
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("create %s: %w", dir, cause(err))
		}
		// Missing, or under a file (found as the walk goes up).
		if _, lerr := os.Lstat(p); lerr == nil {
			to, _ := os.Readlink(p)
			return fmt.Errorf("create %s: %s is a link to %s, which does not exist", dir, p, to)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("create %s: %w", dir, cause(err))
		}
		p = parent
	}
	tmp, err := os.MkdirTemp(p, "."+filepath.Base(filepath.Clean(dir))+".tmp*")
	if err != nil {
		if p == dir {
			return fmt.Errorf("create files in %s: %w", dir, cause(err))
		}
		return fmt.Errorf("create %s: cannot create a directory in %s: %w", dir, p, cause(err))
	}
	os.Remove(tmp)
	return nil
}

// maxLinks bounds the symbolic links followed from a path (Linux's
// MAXSYMLINKS).
const maxLinks = 40

// target returns the file path leads to, following symbolic links (of the
// last element: the directories' links are the kernel's to follow): the
// regular file to replace, or the name to create. Anything else that
// exists is an error wrapping readfile.ErrNotRegular.
func target(path string) (string, error) {
	// The kernel's view first: it also follows the links of /proc
	// (/dev/stdout leads to a terminal, a pipe or a file), which name no
	// file to follow by hand.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		kind := readfile.Kind(st.Mode())
		if lst, err := os.Lstat(path); err == nil && lst.Mode().Type() == fs.ModeSymlink {
			if to, err := filepath.EvalSymlinks(path); err == nil {
				return "", fmt.Errorf("%w (%s, which it links to, is %s)", readfile.ErrNotRegular, to, kind)
			}
			return "", fmt.Errorf("%w (a link to %s)", readfile.ErrNotRegular, kind)
		}
		return "", fmt.Errorf("%w (%s)", readfile.ErrNotRegular, kind)
	}
	p := path
	for range maxLinks {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		m := st.Mode()
		if m.IsRegular() {
			return p, nil
		}
		if m.Type() != fs.ModeSymlink {
			if p != path {
				return "", fmt.Errorf("%w (%s, which it links to, is %s)", readfile.ErrNotRegular, p, readfile.Kind(m))
			}
			return "", fmt.Errorf("%w (%s)", readfile.ErrNotRegular, readfile.Kind(m))
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", syscall.ELOOP
}

// WriteFunc replaces path (or the regular file it links to) with what
// write writes. If write fails, path is left as it was and the temporary
// file is removed. Errors name path (never the temporary file) and what
// went wrong, and wrap the underlying error; a path that is not a regular
// file is refused before write is called (see the package comment).
func WriteFunc(path string, write func(io.Writer) error) (err error) {
	dst, err := target(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, cause(err))
	}
	dir := filepath.Dir(dst)
	f, err := os.CreateTemp(dir, tempPattern(dst))
	if err != nil {
		return createError(path, dst, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, cause(err))
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(Perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, dst); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err = d.Sync(); err != nil && !syncUnsupported(err) {
		return err
	}
	return nil
}

// cause strips the temporary file's name from err (a *fs.PathError or
// *os.LinkError about it), keeping what went wrong ("permission denied",
// "no space left on device", "is a directory").
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// RemoveStale deletes the temporary files that writes of path interrupted
// by a crash or a kill left in its directory, or in that of the file it
// links to (".<base>.tmp<digits>"), and returns their names. Call it only
// while no other process writes path.
func RemoveStale(path string) ([]string, error) {
	if dst, err := target(path); err == nil {
		path = dst
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := "." + base + ".tmp"
	var removed []string
	for _, e := range ents {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// syncUnsupported reports an fsync error that means the directory cannot be
// synced at all on this platform or file system, not that data was lost.
func syncUnsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}
