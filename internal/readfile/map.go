package readfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Map returns the size bytes of the open file f, read-only: mapped into
// memory where the system can (unix), so that reading them copies
// nothing from the page cache (on Linux the whole mapping is entered in
// the page tables at once, reading the file ahead where it is not
// cached, rather than a page fault every few pages), else read whole
// into a new buffer with one read. unmap releases them; the bytes must not be used after it.
// Writing to them faults. A mapped file that shrinks while mapped faults
// on the pages past its new end (SIGBUS): read the bytes within Guard.
func Map(f *os.File, size int64) (b []byte, unmap func(), err error) {
	if size < 0 || size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s: %d bytes cannot be addressed", f.Name(), size)
	}
	if size == 0 {
		return []byte{}, func() {}, nil
	}
	return mapFile(f, int(size))
}

// ErrChanged is what Guard returns when the bytes it read faulted: the
// mapped file was truncated (or its storage failed) while it was read.
var ErrChanged = errors.New("the file changed (was truncated?) while it was read")

// Guard runs fn, turning a fault while it reads mapped bytes (see Map)
// into the error ErrChanged instead of a crash. fn must read them on the
// calling goroutine.
func Guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if isFault(r) {
				err = ErrChanged
				return
			}
			panic(r)
		}
	}()
	return fn()
}

// isFault reports whether r, recovered under debug.SetPanicOnFault, is a
// memory fault: a runtime error with the faulting address, or, where the
// signal carries no address (qemu-user reports a SIGBUS at 0), the
// runtime's memory-fault error without one.
func isFault(r any) bool {
	if e, ok := r.(interface{ Addr() uintptr }); ok && e != nil {
		return true
	}
	e, ok := r.(runtime.Error)
	return ok && strings.Contains(e.Error(), "invalid memory address")
}

// readWhole reads the size bytes of f from its start into a new buffer.
func readWhole(f *os.File, size int) ([]byte, func(), error) {
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if n == size {
		return b, func() {}, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = ErrChanged
	}
	return nil, nil, fmt.Errorf("%s: %w", f.Name(), err)
}
