package viz

import (
	"fmt"
	"image"
	"image/png"
	"io"

	"github.com/simdgpt/simdgpt/internal/atomicfile"
)

// WritePNG encodes img as PNG into path atomically: it writes a temporary
// file in the same directory, syncs it and renames it over path, so a
// reader sees either the old image or the new one, never a partial file.
// A link to a regular file replaces that file; a path that exists and is
// not a regular file (a directory, a FIFO, a device) is an error, and
// left as it is.
func WritePNG(path string, img image.Image) error {
	if err := atomicfile.WriteFunc(path, func(w io.Writer) error { return png.Encode(w, img) }); err != nil {
		return fmt.Errorf("viz: %w", err)
	}
	return nil
}
