//go:build unix

package readfile

import (
	"os"
	"syscall"
)

// mapFile maps the size > 0 bytes of f read-only and shared (the page
// cache's pages themselves).
func mapFile(f *os.File, size int) ([]byte, func(), error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		// A file system that cannot map: one read instead.
		return readWhole(f, size)
	}
	return b, func() { syscall.Munmap(b) }, nil
}

// Maps reports whether Map maps files (true) or reads them into memory
// (false), for callers that count the memory a load takes.
const Maps = true
