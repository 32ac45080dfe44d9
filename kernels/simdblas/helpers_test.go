package simdblas_test

import (
	"math"
	"math/rand/v2"
	"testing"
)

// eps is float32's machine epsilon (the spacing of floats at 1).
const eps = 0x1p-23

// guard is the number of sentinel elements after every slice a test
// passes, between its length and the end of its backing array; sentinel
// is their value. A kernel writing past a slice's length (which Go's
// bounds checks cannot catch in assembly) changes them.
const guard = 16

var sentinel = float32(math.Float32frombits(0x7fc0beef)) // a NaN with a payload

// guarded returns a slice of n random elements in [-1, 1) with a cap of
// n, followed in its backing array by guard sentinels, and that whole
// backing array.
func guarded(rng *rand.Rand, n int) (s, full []float32) {
	buf := make([]float32, n+guard)
	for i := range buf {
		if i < n {
			buf[i] = 2*rng.Float32() - 1
		} else {
			buf[i] = sentinel
		}
	}
	return buf[:n:n], buf
}

// checkGuard fails the test if the sentinels after the first n elements
// of full, a backing array from guarded, were changed.
func checkGuard(t *testing.T, name string, full []float32, n int) {
	t.Helper()
	for i, v := range full[n:] {
		if math.Float32bits(v) != math.Float32bits(sentinel) {
			t.Fatalf("%s: element %d past the end was overwritten (%v)", name, n+i, v)
		}
	}
}

// same reports whether x and y hold the same bits.
func same(x, y []float32) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return false
		}
	}
	return true
}

// panicValue runs f and returns what it panicked with, nil if it did not.
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// vecLen is the shortest length gonum accepts for n elements with
// increment inc.
func vecLen(n, inc int) int {
	if n == 0 {
		return 0
	}
	if inc < 0 {
		inc = -inc
	}
	return 1 + (n-1)*inc
}

// element returns the index of the i-th of n elements with increment inc
// under gonum's convention (a negative increment starts at the end).
func element(i, n, inc int) int {
	if inc < 0 {
		return (n - 1 - i) * -inc
	}
	return i * inc
}
