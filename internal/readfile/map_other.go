//go:build !unix

package readfile

import "os"

// mapFile reads the size > 0 bytes of f, where files are not mapped.
func mapFile(f *os.File, size int) ([]byte, func(), error) {
	return readWhole(f, size)
}

// Maps reports whether Map maps files (true) or reads them into memory
// (false), for callers that count the memory a load takes.
const Maps = false
