package kernels

import (
	"fmt"
	"testing"
)

// vecBenchSizes are the benchmark lengths: L1-resident (256, 4096), L2
// (65536 floats = 256 KiB per slice) and memory (1<<22 floats = 16 MiB).
var vecBenchSizes = []int{256, 4096, 65536, 1 << 22}

// benchVec runs f for every implementation and size as sub-benchmarks
// named impl/n=N. bytesPerElem is the memory traffic of one element, read
// plus written, so that the reported MB/s is the bandwidth the kernel
// achieves.
func benchVec(b *testing.B, bytesPerElem int, f func(p *Impl, x, y, d []float32) float32) {
	for _, p := range Implementations() {
		for _, n := range vecBenchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", p.Name(), n), func(b *testing.B) {
				x, y := vecInputs(n)
				d := make([]float32, n)
				b.SetBytes(int64(bytesPerElem * n))
				var sink float32
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sink += f(p, x, y, d)
				}
				vecBenchSink = sink
			})
		}
	}
}

// vecBenchSink keeps the reductions' results alive.
var vecBenchSink float32

func BenchmarkDot(b *testing.B) {
	benchVec(b, 8, func(p *Impl, x, y, _ []float32) float32 { return p.Dot(x, y) })
}

func BenchmarkSum(b *testing.B) {
	benchVec(b, 4, func(p *Impl, x, _, _ []float32) float32 { return p.Sum(x) })
}

func BenchmarkMax(b *testing.B) {
	benchVec(b, 4, func(p *Impl, x, _, _ []float32) float32 { return p.Max(x) })
}

func BenchmarkAxpy(b *testing.B) {
	// alpha is tiny so y stays bounded however many iterations run.
	benchVec(b, 12, func(p *Impl, x, _, d []float32) float32 { p.Axpy(1e-7, x, d); return 0 })
}

func BenchmarkScale(b *testing.B) {
	// Scaling by 1 keeps the data unchanged (and free of subnormals).
	benchVec(b, 8, func(p *Impl, x, _, _ []float32) float32 { p.Scale(1, x); return 0 })
}

func BenchmarkAdd(b *testing.B) {
	benchVec(b, 12, func(p *Impl, x, y, d []float32) float32 { p.Add(d, x, y); return 0 })
}
