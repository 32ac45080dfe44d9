package kernels

import (
	"math"
	"testing"
)

// FuzzGemmLowbit checks every implementation against the float64
// reference on shapes, scalars, strides and offsets chosen by the fuzzer,
// for both weight types (sizes kept small so each input runs fast;
// TestGemmLowbitSweep covers the boundaries).
func FuzzGemmLowbit(f *testing.F) {
	f.Add(false, uint8(1), uint8(9), uint8(33), float32(1), float32(0), uint8(0), uint64(1))
	f.Add(true, uint8(8), uint8(17), uint8(65), float32(-0.5), float32(1), uint8(3), uint64(2))
	f.Add(false, uint8(9), uint8(1), uint8(31), float32(2), float32(0.25), uint8(1), uint64(3))
	f.Add(true, uint8(0), uint8(5), uint8(0), float32(1), float32(2), uint8(2), uint64(4))
	f.Fuzz(func(t *testing.T, int8w bool, m8, n8, k8 uint8, alpha, beta float32, pad uint8, seed uint64) {
		if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) || math.Abs(float64(alpha)) > 1e3 ||
			math.IsNaN(float64(beta)) || math.IsInf(float64(beta), 0) || math.Abs(float64(beta)) > 1e3 {
			return // keep magnitudes where the tolerance is meaningful
		}
		format := lowbitFormats[0]
		if int8w {
			format = lowbitFormats[1]
		}
		tc := lowbitCase{m: int(m8 % 12), n: int(n8 % 70), k: int(k8 % 140), alpha: alpha, beta: beta, padA: int(pad % 5), padC: int(pad / 5 % 3), off: int(seed % 5)}
		for _, p := range Implementations() {
			checkLowbitCase(t, p, format, tc, seed)
		}
	})
}
