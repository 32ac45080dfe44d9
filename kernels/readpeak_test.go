package kernels

import (
	"math"
	"testing"
)

// TestReadPeakLoop checks that ReadPeakLoop reads what it says on every
// implementation: with a read loop, the whole 1 KiB blocks of x (its sum
// that of those elements), otherwise all of x with Sum; x shorter than a
// block is read with Sum.
func TestReadPeakLoop(t *testing.T) {
	for _, p := range Implementations() {
		for _, n := range []int{0, 1, 255, 256, 257, 1000, 4096, 70000} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%13) - 6
			}
			got := p.ReadPeakLoop(x)
			want, read := 4*n, n
			if s := p.set.Instruments; s.ReadLoop != nil && n >= s.ReadBlock {
				read = n / s.ReadBlock * s.ReadBlock
				want = 4 * read
			}
			if got != want {
				t.Errorf("%s n=%d: %d bytes read, want %d", p.Name(), n, got, want)
			}
			var sum float64
			for _, v := range x[:read] {
				sum += float64(v)
			}
			if math.Abs(float64(readSink)-sum) > 1e-3*(1+math.Abs(sum)) {
				t.Errorf("%s n=%d: the loop's sum %v, want %v", p.Name(), n, readSink, sum)
			}
		}
	}
}
