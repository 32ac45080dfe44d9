package kernels

import (
	"fmt"
	"testing"
)

// smBenchRows is the number of rows of the benchmark matrices.
const smBenchRows = 64

// BenchmarkSoftmax times Softmax on a 64×n matrix of scores uniform in
// [-10, 10] for every implementation, out of place (x and y distinct,
// 2·64·n·4 bytes of data) and in place, and reports ns per element.
func BenchmarkSoftmax(b *testing.B) {
	for _, p := range Implementations() {
		for _, n := range []int{256, 1024, 4096} {
			x := smBenchInput(n)
			y := make([]float32, len(x))
			b.Run(fmt.Sprintf("%s/n=%d", p.Name(), n), func(b *testing.B) {
				b.SetBytes(int64(8 * len(x)))
				for b.Loop() {
					p.Softmax(smBenchRows, n, x, n, y, n)
				}
				smReportPerElem(b, len(x))
			})
			b.Run(fmt.Sprintf("%s/n=%d/inplace", p.Name(), n), func(b *testing.B) {
				z := append([]float32(nil), x...)
				b.SetBytes(int64(8 * len(x)))
				for b.Loop() {
					// Softmax of a softmax output is still a typical row.
					p.Softmax(smBenchRows, n, z, n, z, n)
				}
				smReportPerElem(b, len(x))
			})
		}
	}
}

// BenchmarkSoftmaxBackward times SoftmaxBackward on 64×n matrices.
func BenchmarkSoftmaxBackward(b *testing.B) {
	for _, p := range Implementations() {
		for _, n := range []int{256, 1024, 4096} {
			x := smBenchInput(n)
			y := make([]float32, len(x))
			genericImpl.Softmax(smBenchRows, n, x, n, y, n)
			dy := randSlice(newRand(9), len(x))
			dx := make([]float32, len(x))
			b.Run(fmt.Sprintf("%s/n=%d", p.Name(), n), func(b *testing.B) {
				b.SetBytes(int64(12 * len(x)))
				for b.Loop() {
					p.SoftmaxBackward(smBenchRows, n, y, n, dy, n, dx, n)
				}
				smReportPerElem(b, len(x))
			})
		}
	}
}

func smBenchInput(n int) []float32 {
	x := randSlice(newRand(8), smBenchRows*n)
	for i := range x {
		x[i] *= 10
	}
	return x
}

func smReportPerElem(b *testing.B, elems int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elems), "ns/elem")
}
