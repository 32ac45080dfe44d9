//go:build unix

package guard

import (
	"runtime/debug"
	"testing"
)

// TestGuardFaults checks that the page after an End slice and the page
// before a Start slice really fault.
func TestGuardFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		side Side
		idx  func(s []float32) int
	}{
		{"end", End, func(s []float32) int { return len(s) }},
		{"start", Start, func(s []float32) int { return -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{1, 7, 1024, 1025} {
				s, b := Alloc(n, tc.side)
				s[0], s[n-1] = 1, 2 // in bounds: must not fault
				if !faults(s, tc.idx(s)) {
					t.Errorf("n=%d: access at index %d did not fault", n, tc.idx(s))
				}
				b.Free()
			}
		})
	}
}

// faults reports whether reading element i of the array behind s (possibly
// out of the slice's bounds) faults.
func faults(s []float32, i int) (faulted bool) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if recover() != nil {
			faulted = true
		}
	}()
	sink = *unsafeAt(s, i)
	return false
}

var sink float32
