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

// TestArenaFaults checks that slices an Arena places, of every length up
// to its size, hold their contents and fault one element past their
// guarded side, and that a slice longer than the arena is refused.
func TestArenaFaults(t *testing.T) {
	a := NewArena(1500)
	defer a.Free()
	for _, n := range []int{1, 7, 1024, 1025, 1500} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i + 1)
		}
		for _, side := range []Side{End, Start} {
			s := a.Copy(src, side)
			if len(s) != n || cap(s) != n || s[0] != 1 || s[n-1] != float32(n) {
				t.Fatalf("n=%d side %d: len %d cap %d, s[0] = %v, s[n-1] = %v", n, side, len(s), cap(s), s[0], s[n-1])
			}
			i := -1
			if side == End {
				i = n
			}
			if !faults(s, i) {
				t.Errorf("n=%d side %d: access at index %d did not fault", n, side, i)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Copy of 1501 floats into an arena of 1500 did not panic")
		}
	}()
	a.Copy(make([]float32, 1501), End)
}
