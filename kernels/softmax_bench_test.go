package kernels

import (
	"fmt"
	"testing"
)

// smBenchElems is the number of elements of a benchmark matrix: 256 KiB
// of input and as much output, which stay in L2 (1 MiB here) across
// iterations, as an attention head's scores do between the kernels that
// write and read them. The /stream cases use a matrix 64 times larger, so
// every iteration streams it from memory: they measure bandwidth.
const (
	smBenchElems  = 1 << 16
	smStreamElems = 64 * smBenchElems
)

// BenchmarkSoftmax times Softmax on an (smBenchElems/n)×n matrix of scores
// uniform in [-10, 10] for every implementation, out of place (x and y
// distinct) and in place, and reports ns per element.
func BenchmarkSoftmax(b *testing.B) {
	for _, p := range Implementations() {
		for _, n := range []int{256, 1024, 4096} {
			for _, tc := range []struct {
				suffix         string
				elems          int
				inplace, force bool
			}{{"", smBenchElems, false, false}, {"/inplace", smBenchElems, true, false}, {"/stream", smStreamElems, false, n == 4096}} {
				if tc.elems > smBenchElems && !tc.force {
					continue
				}
				rows := tc.elems / n
				x := smBenchInput(rows, n)
				y := make([]float32, len(x))
				if tc.inplace {
					// Softmax of a softmax output is still a typical row.
					y = x
				}
				b.Run(fmt.Sprintf("%s/n=%d%s", p.Name(), n, tc.suffix), func(b *testing.B) {
					b.SetBytes(int64(8 * len(x)))
					for b.Loop() {
						p.Softmax(rows, n, x, n, y, n)
					}
					smReportPerElem(b, len(x))
				})
			}
		}
	}
}

// BenchmarkSoftmaxBackward times SoftmaxBackward on (smBenchElems/n)×n
// matrices.
func BenchmarkSoftmaxBackward(b *testing.B) {
	for _, p := range Implementations() {
		for _, n := range []int{256, 1024, 4096} {
			rows := smBenchElems / n
			x := smBenchInput(rows, n)
			y := make([]float32, len(x))
			genericImpl.Softmax(rows, n, x, n, y, n)
			dy := randSlice(newRand(9), len(x))
			dx := make([]float32, len(x))
			b.Run(fmt.Sprintf("%s/n=%d", p.Name(), n), func(b *testing.B) {
				b.SetBytes(int64(12 * len(x)))
				for b.Loop() {
					p.SoftmaxBackward(rows, n, y, n, dy, n, dx, n)
				}
				smReportPerElem(b, len(x))
			})
		}
	}
}

func smBenchInput(rows, n int) []float32 {
	x := randSlice(newRand(8), rows*n)
	for i := range x {
		x[i] *= 10
	}
	return x
}

func smReportPerElem(b *testing.B, elems int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elems), "ns/elem")
}
