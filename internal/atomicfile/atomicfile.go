// Package atomicfile replaces files atomically: the new contents go to a
// temporary file in the same directory, which is synced, given its
// permissions and renamed over the target, and the directory is synced.
// A reader sees the old file or the new one, never a partial one, and a
// crash leaves the old file in place.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// WriteFunc replaces path with what write writes. If write fails, path is
// left as it was and the temporary file is removed.
func WriteFunc(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
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

// syncUnsupported reports an fsync error that means the directory cannot be
// synced at all on this platform or file system, not that data was lost.
func syncUnsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}
