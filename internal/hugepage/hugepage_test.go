package hugepage

import "testing"

// TestSpan covers the whole huge pages of a buffer and nothing outside it.
func TestSpan(t *testing.T) {
	const M = Size
	for _, c := range []struct {
		name           string
		start, n       uintptr
		wantLo, wantHi uintptr
	}{
		{"aligned, one page", 4 * M, M, 4 * M, 5 * M},
		{"aligned, three pages", 4 * M, 3 * M, 4 * M, 7 * M},
		{"aligned, short of one page", 4 * M, M - 1, 4 * M, 4 * M},
		{"unaligned start", 4*M + 8192, 3 * M, 5 * M, 7 * M},
		{"unaligned both ends", 4*M + 1, 2*M + 10, 5 * M, 6 * M},
		{"unaligned, within one page", 4*M + 1, M, 5 * M, 5 * M},
		{"empty", 4 * M, 0, 4 * M, 4 * M},
	} {
		lo, hi := span(c.start, c.n)
		if hi > lo && (lo < c.start || hi > c.start+c.n || lo%M != 0 || hi%M != 0) {
			t.Errorf("%s: span = [%#x, %#x) is not whole huge pages within [%#x, %#x)", c.name, lo, hi, c.start, c.start+c.n)
		}
		if lo != c.wantLo || hi != c.wantHi {
			t.Errorf("%s: span(%#x, %#x) = [%#x, %#x), want [%#x, %#x)", c.name, c.start, c.n, lo, hi, c.wantLo, c.wantHi)
		}
	}
}

// TestAdviseKeepsContents: advice changes no byte, of buffers of every
// size class (none, smaller than a huge page, many), before and after
// they are written.
func TestAdviseKeepsContents(t *testing.T) {
	Advise([]float32(nil))
	Advise([]byte{})
	for _, n := range []int{1, Size / 4, 3*Size/4 + 5, 5 * Size / 4} {
		v := make([]float32, n)
		Advise(v)
		for i := range v {
			v[i] = float32(i)
		}
		Advise(v)
		for i, x := range v {
			if x != float32(i) {
				t.Fatalf("n = %d: v[%d] = %v after Advise, want %d", n, i, x, i)
			}
		}
	}
}
