//go:build amd64 && !purego

package amd64

import (
	"fmt"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// BenchmarkMicroKernel measures each GEMM micro-kernel alone on
// cache-resident data: the ceiling for the blocked driver.
func BenchmarkMicroKernel(b *testing.B) {
	for _, g := range []struct {
		name string
		ks   gemm.Kernels
	}{{"avx2", kernelsAVX2}, {"avx2", kernelsAVX2x4x24}, {"avx512", kernelsAVX512}, {"avx512", kernelsAVX512x8x48}} {
		for _, mk := range []gemm.MicroKernel{g.ks.Wide, g.ks.Narrow} {
			for _, k := range []int{64, 128, 256} {
				for _, packedA := range []bool{false, true} {
					b.Run(fmt.Sprintf("%s/%dx%d/k=%d/packedA=%v", g.name, mk.MR, mk.NR, k, packedA), func(b *testing.B) {
						if g.name == "avx512" && !hasAVX512 || !hasAVX2 {
							b.Skip("not supported by this CPU")
						}
						a := make([]float32, g.ks.PanelStride*k)
						bp := make([]float32, mk.NR*k)
						c := make([]float32, mk.MR*mk.NR)
						fn, rsa, csa := mk.Strided, k, 1
						if packedA {
							fn, rsa, csa = mk.Packed, 0, 0
						}
						for b.Loop() {
							fn(k, &a[0], rsa, csa, &bp[0], mk.NR, &c[0], mk.NR, mk.MR, mk.NR, 1, 1)
						}
						b.ReportMetric(2*float64(mk.MR*mk.NR*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}
