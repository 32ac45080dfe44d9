package viz

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
)

// WritePNG encodes img as PNG into path atomically: it writes a temporary
// file in the same directory, syncs it and renames it over path, so a
// reader sees either the old image or the new one, never a partial file.
func WritePNG(path string, img image.Image) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	if err := png.Encode(f, img); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	return nil
}
