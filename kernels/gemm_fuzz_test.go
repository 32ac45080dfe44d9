package kernels

import (
	"math"
	"testing"
)

// FuzzGemm checks every implementation against generic on shapes,
// transposes, scalars and strides chosen by the fuzzer (sizes kept small
// so each input runs fast; the float64-referenced sweeps cover large ones).
func FuzzGemm(f *testing.F) {
	f.Add(uint8(0), uint8(14), uint8(32), uint8(5), float32(1), float32(0), uint8(0), uint64(1))
	f.Add(uint8(3), uint8(15), uint8(33), uint8(9), float32(-0.5), float32(1), uint8(3), uint64(2))
	f.Add(uint8(1), uint8(1), uint8(65), uint8(64), float32(2), float32(0.25), uint8(1), uint64(3))
	f.Add(uint8(2), uint8(29), uint8(17), uint8(0), float32(1), float32(1), uint8(2), uint64(4))
	f.Fuzz(func(t *testing.T, trans, m8, n8, k8 uint8, alpha, beta float32, pad uint8, seed uint64) {
		if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) || math.Abs(float64(alpha)) > 1e3 ||
			math.IsNaN(float64(beta)) || math.IsInf(float64(beta), 0) || math.Abs(float64(beta)) > 1e3 {
			return // keep magnitudes where the tolerance below is meaningful
		}
		tc := gemmCase{transA: trans&1 != 0, transB: trans&2 != 0, m: int(m8 % 80), n: int(n8 % 100), k: int(k8 % 140), alpha: alpha, beta: beta, pad: int(pad % 7), off: int(seed % 5)}
		d := tc.data(newRand(seed))
		want := append([]float32(nil), d.c...)
		genericImpl.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, alpha, d.a, d.lda, d.b, d.ldb, beta, want, d.ldc)
		_, mag := gemmRef(tc, d)
		for _, p := range gemmNonGeneric() {
			got := append([]float32(nil), d.c...)
			p.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, alpha, d.a, d.lda, d.b, d.ldb, beta, got, d.ldc)
			for i := 0; i < tc.m; i++ {
				for j := 0; j < d.ldc; j++ {
					g, w := got[i*d.ldc+j], want[i*d.ldc+j]
					if j >= tc.n {
						if g != w {
							t.Fatalf("%s %+v: padding C[%d,%d] changed", p.Name(), tc, i, j)
						}
						continue
					}
					if !closeTo(g, w, 2*gemmTol(tc.k, mag[i*tc.n+j])) {
						t.Fatalf("%s %+v: C[%d,%d] = %v, generic %v", p.Name(), tc, i, j, g, w)
					}
				}
			}
		}
	})
}

// FuzzMaskedScores checks every implementation against generic.
func FuzzMaskedScores(f *testing.F) {
	f.Add(uint8(14), uint8(32), uint8(8), int16(0), uint8(0), uint64(1))
	f.Add(uint8(1), uint8(70), uint8(64), int16(69), uint8(1), uint64(2))
	f.Add(uint8(33), uint8(17), uint8(3), int16(-5), uint8(2), uint64(3))
	f.Fuzz(func(t *testing.T, tq8, tk8, d8 uint8, offset int16, pad uint8, seed uint64) {
		tq, tk, d, ld := int(tq8%80), int(tk8%100), int(d8%130), int(pad%5)
		r := newRand(seed)
		q, k := randSlice(r, tq*(d+ld)), randSlice(r, tk*(d+ld))
		init := randSlice(r, tq*(tk+ld)) // padding must survive
		want := append([]float32(nil), init...)
		genericImpl.MaskedScores(tq, tk, d, 0.3, q, d+ld, k, d+ld, int(offset), want, tk+ld)
		for _, p := range gemmNonGeneric() {
			got := append([]float32(nil), init...)
			p.MaskedScores(tq, tk, d, 0.3, q, d+ld, k, d+ld, int(offset), got, tk+ld)
			for i := range got {
				if !closeTo(got[i], want[i], float64(d+2)*float32Eps*0.3*float64(d)+1e-30) {
					t.Fatalf("%s tq=%d tk=%d d=%d offset=%d: S[%d] = %v, generic %v", p.Name(), tq, tk, d, offset, i, got[i], want[i])
				}
			}
		}
	})
}

// FuzzGemmBiasGELU checks GemmBiasGELU of every implementation, on shapes,
// transposes and strides chosen by the fuzzer (kept small so each input
// runs fast), as TestGemmBiasGELU does: pre against float64, out against
// gelu of pre, both bitwise against Gemm then BiasGELU.
func FuzzGemmBiasGELU(f *testing.F) {
	f.Add(uint8(0), uint8(14), uint8(32), uint8(5), uint8(0), uint64(1))
	f.Add(uint8(3), uint8(15), uint8(33), uint8(9), uint8(3), uint64(2))
	f.Add(uint8(1), uint8(1), uint8(65), uint8(64), uint8(1), uint64(3))
	f.Add(uint8(2), uint8(29), uint8(17), uint8(0), uint8(2), uint64(4))
	f.Fuzz(func(t *testing.T, trans, m8, n8, k8, pad uint8, seed uint64) {
		tc := gemmCase{transA: trans&1 != 0, transB: trans&2 != 0, m: int(m8 % 40), n: int(n8 % 80), k: int(k8 % 80), pad: int(pad % 7), off: int(seed % 5)}
		gemmBiasGELUCase(t, gemmImpls(), tc, seed)
	})
}
