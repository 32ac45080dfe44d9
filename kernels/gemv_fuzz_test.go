package kernels

import (
	"math"
	"testing"
)

// FuzzGemv checks every implementation against the float64 reference on
// shapes, transposes, scalars, strides and offsets chosen by the fuzzer
// (sizes kept small so each input runs fast; TestGemvSweep covers larger
// ones).
func FuzzGemv(f *testing.F) {
	f.Add(false, uint8(9), uint8(33), float32(1), float32(0), uint8(0), uint64(1))
	f.Add(true, uint8(17), uint8(65), float32(-0.5), float32(1), uint8(3), uint64(2))
	f.Add(false, uint8(1), uint8(129), float32(2), float32(0.25), uint8(1), uint64(3))
	f.Add(true, uint8(0), uint8(5), float32(1), float32(2), uint8(2), uint64(4))
	f.Fuzz(func(t *testing.T, trans bool, m8, n8 uint8, alpha, beta float32, pad uint8, seed uint64) {
		if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) || math.Abs(float64(alpha)) > 1e3 ||
			math.IsNaN(float64(beta)) || math.IsInf(float64(beta), 0) || math.Abs(float64(beta)) > 1e3 {
			return // keep magnitudes where the tolerance is meaningful
		}
		tc := gemvCase{trans: trans, m: int(m8 % 100), n: int(n8 % 140), alpha: alpha, beta: beta, pad: int(pad % 7), off: int(seed % 5)}
		for _, p := range Implementations() {
			checkGemvCase(t, p, tc, seed)
		}
	})
}
