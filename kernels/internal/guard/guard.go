//go:build unix

// Package guard allocates float32 slices that sit flush against an
// unmapped page, so that a kernel reading or writing even one element past
// the end (or before the start) of a slice faults instead of silently
// succeeding. It is used by the memory-safety tests of every kernel.
package guard

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Buffer is a mapping holding one guarded slice. Free must be called to
// release it.
type Buffer struct {
	mem []byte
}

// Side says which end of the slice touches the unmapped page.
type Side int

const (
	// End places the slice's last element just before an unmapped page.
	End Side = iota
	// Start places the slice's first element just after an unmapped page.
	Start
)

// Alloc maps a buffer and returns a slice of n float32s whose given side is
// flush against a PROT_NONE page. The slice's capacity equals its length,
// so appending reallocates. The contents are zero.
func Alloc(n int, side Side) ([]float32, *Buffer) {
	page := unix.Getpagesize()
	bytes := n * 4
	dataPages := (bytes + page - 1) / page
	if dataPages == 0 {
		dataPages = 1
	}
	total := (dataPages + 2) * page
	mem, err := unix.Mmap(-1, 0, total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("guard: mmap %d bytes: %v", total, err))
	}
	if err := unix.Mprotect(mem[:page], unix.PROT_NONE); err != nil {
		panic(fmt.Sprintf("guard: mprotect: %v", err))
	}
	if err := unix.Mprotect(mem[total-page:], unix.PROT_NONE); err != nil {
		panic(fmt.Sprintf("guard: mprotect: %v", err))
	}
	var off int
	switch side {
	case End:
		off = total - page - bytes
	case Start:
		off = page
	}
	p := unsafe.Pointer(&mem[off])
	return unsafe.Slice((*float32)(p), n), &Buffer{mem: mem}
}

// Copy returns a guarded copy of src (see Alloc) and its buffer.
func Copy(src []float32, side Side) ([]float32, *Buffer) {
	s, b := Alloc(len(src), side)
	copy(s, src)
	return s, b
}

// Free unmaps the buffer; its slice must not be used afterwards.
func (b *Buffer) Free() {
	if b.mem != nil {
		if err := unix.Munmap(b.mem); err != nil {
			panic(fmt.Sprintf("guard: munmap: %v", err))
		}
		b.mem = nil
	}
}
