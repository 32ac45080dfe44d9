//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkMicroKernel measures each GEMM micro-kernel alone on
// cache-resident data: the ceiling for the blocked driver.
func BenchmarkMicroKernel(b *testing.B) {
	for _, g := range []struct {
		name string
		bg   *blockedGemm
	}{{"avx2", gemmAVX2}, {"avx512", gemmAVX512}} {
		for _, mk := range []microKernel{g.bg.wide, g.bg.narrow} {
			for _, k := range []int{64, 128, 256} {
				for _, packedA := range []bool{false, true} {
					b.Run(fmt.Sprintf("%s/%dx%d/k=%d/packedA=%v", g.name, mk.mr, mk.nr, k, packedA), func(b *testing.B) {
						a := make([]float32, mk.mr*k)
						bp := make([]float32, mk.nr*k)
						c := make([]float32, mk.mr*mk.nr)
						rsa, csa := k, 1
						if packedA {
							rsa, csa = 1, mk.mr
						}
						for b.Loop() {
							mk.fn(k, &a[0], rsa, csa, &bp[0], mk.nr, &c[0], mk.nr, mk.mr, mk.nr, 1, 1)
						}
						b.ReportMetric(2*float64(mk.mr*mk.nr*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}
