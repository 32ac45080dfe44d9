// Package atomicfile replaces files atomically: the new contents go to a
// temporary file in the same directory, which is synced, given its
// permissions and renamed over the target, and the directory is synced.
// A reader sees the old file or the new one, never a partial one, and a
// crash leaves the old file in place (and possibly a temporary file, which
// RemoveStale deletes).
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

// WriteFunc replaces path with what write writes. If write fails, path is
// left as it was and the temporary file is removed. Errors name path (never
// the temporary file) and what went wrong, and wrap the underlying error.
func WriteFunc(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, cause(err))
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
	if err = os.Rename(tmp, path); err != nil {
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
// by a crash or a kill left in its directory (".<base>.tmp<digits>") and
// returns their names. Call it only while no other process writes path.
func RemoveStale(path string) ([]string, error) {
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
