//go:build amd64 && !purego

package amd64

import "testing"

// BenchmarkBF16MicroKernel times the VDPBF16PS micro-kernel alone on a
// sliver of A and a panel of B that stay in L1 and L2 (kp pairs), as a
// share of the bfloat16 peak loop timed beside it: the ceiling of the
// blocked product.
func BenchmarkBF16MicroKernel(b *testing.B) {
	if !hasAVX512BF16 {
		b.Skip("no AVX512_BF16")
	}
	for _, kp := range []int{64, 224, 512} {
		a := make([]uint32, 14*kp)
		bp := make([]uint32, 32*kp*8)
		c := make([]float32, 14*32)
		b.Run("kp"+itoa(kp), func(b *testing.B) {
			flops := 0
			for b.Loop() {
				for j := 0; j < 8; j++ {
					gemmBF16Kernel14x32AVX512(kp, &a[0], kp, 1, &bp[j*32*kp], &c[0], 32, 1, 0)
				}
				flops += 8 * 14 * 32 * 2 * 2 * kp
			}
			b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("peak", func(b *testing.B) {
		flops := 0
		for b.Loop() {
			bf16PeakAVX512(1 << 12)
			flops += 24 * 64 << 12
		}
		b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
