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

// Arena is one mapping, unmapped pages at both ends, that places slices of
// up to its size flush against either guard in turn (Arena.Copy): the
// guarded slices of many cases for the price of one mapping. A slice it
// returned must not be used after the next Copy or Free.
type Arena struct {
	buf Buffer
	n   int // floats between the guards
}

// NewArena maps an arena for slices of up to n float32s.
func NewArena(n int) *Arena {
	s, b := Alloc(n, Start)
	return &Arena{buf: *b, n: len(s)}
}

// Copy returns a copy of src flush against the arena's guard on side, as
// Copy does with its own mapping. It panics if src is longer than the
// arena.
func (a *Arena) Copy(src []float32, side Side) []float32 {
	n := len(src)
	if n > a.n {
		panic(fmt.Sprintf("guard: Arena.Copy of %d floats into an arena of %d", n, a.n))
	}
	page := unix.Getpagesize()
	end := len(a.buf.mem) - page // the first byte of the guard at the end
	off := page
	if side == End {
		off = end - 4*n
	}
	s := unsafe.Slice((*float32)(unsafe.Pointer(&a.buf.mem[off])), n)
	copy(s, src)
	return s
}

// Free unmaps the arena.
func (a *Arena) Free() { a.buf.Free() }
