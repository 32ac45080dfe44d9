// Package hugepage asks the system to back large buffers with huge pages
// (transparent huge pages on Linux), so that filling a buffer the size of
// a model's weights takes one page fault per 2 MiB instead of one per
// 4 KiB page, and reading it misses the TLB less.
package hugepage

import "unsafe"

// Size is the huge page size Advise aligns to.
const Size = 2 << 20

// Advise asks that the memory of v be backed by huge pages where it can
// be: the part of it that covers whole huge pages. Call it on a new
// buffer before writing to it; pages already touched keep their size
// until the system collapses them. It is only advice: it changes no byte
// of v, and where the system has no huge pages (or v covers none) it
// does nothing.
func Advise[T any](v []T) {
	if len(v) == 0 {
		return
	}
	n := uintptr(len(v)) * unsafe.Sizeof(v[0])
	if lo, hi := span(uintptr(unsafe.Pointer(&v[0])), n); hi > lo {
		advise(lo, hi-lo)
	}
}

// span returns the whole huge pages [lo, hi) within the n bytes at start
// (hi <= lo: none).
func span(start, n uintptr) (lo, hi uintptr) {
	lo = (start + Size - 1) &^ (Size - 1)
	hi = (start + n) &^ (Size - 1)
	return lo, hi
}
