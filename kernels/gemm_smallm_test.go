package kernels

import (
	"math"
	"runtime"
	"testing"
)

// TestGemmSmallM covers the products with few rows of op(A), which the
// SIMD drivers compute on the skinny kernels: every m from 1 past the
// largest taken (8) and every row count of the kernels, all four
// transposes, n and k across the vector, column-block and row-block
// edges, odd leading dimensions and unaligned starts, against the
// float64 reference (checkGemmCase: C within Gemm's bound, everything
// around it untouched).
func TestGemmSmallM(t *testing.T) {
	ns := []int{1, 7, 8, 9, 16, 17, 33, 64, 65, 129, 200}
	ks := []int{1, 2, 5, 16, 17, 40}
	if testing.Short() {
		ns, ks = []int{1, 9, 17, 65, 129}, []int{1, 5, 17}
	}
	forEachGemmImpl(t, func(t *testing.T, p *Impl) {
		seed := uint64(1)
		for ti := 0; ti < 4; ti++ {
			for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17} {
				for _, n := range ns {
					for _, k := range ks {
						tc := gemmCase{transA: ti&1 != 0, transB: ti&2 != 0, m: m, n: n, k: k, alpha: 0.75, beta: float32(seed%3) / 2, pad: int(seed % 3), off: int(seed % 5)}
						checkGemmCase(t, p, tc, seed)
						seed++
					}
				}
			}
		}
		// B k×n beyond the size from which the SIMD drivers read it row
		// by row (the stream kernels), every row count they take (up to
		// 8 on AVX2) and one past.
		for _, transA := range []bool{false, true} {
			for m := 1; m <= 9; m++ {
				tc := gemmCase{transA: transA, m: m, n: 1029, k: 1027, alpha: 0.75, beta: float32(seed%3) / 2, pad: int(seed % 3), off: int(seed % 5)}
				checkGemmCase(t, p, tc, seed)
				seed++
			}
		}
	})
}

// TestGemmSmallMSplit checks that a small-M product large enough to be
// split between goroutines, and GemmBiasGELU on it, give bitwise the
// results of GOMAXPROCS=1, and that GemmBiasGELU's pre is bitwise Gemm's.
func TestGemmSmallMSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("large problem")
	}
	for _, p := range gemmNonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for ti := 0; ti < 4; ti++ {
				for _, m := range []int{1, 3, 8} {
					ta, tb := ti&1 != 0, ti&2 != 0
					tc := gemmCase{transA: ta, transB: tb, m: m, n: 2100, k: 700, alpha: 1, pad: 1}
					d := tc.data(newRand(uint64(ti*10 + m)))
					bias := randSlice(newRand(1), tc.n)
					run := func(procs int) (c, pre, out []float32) {
						prev := runtime.GOMAXPROCS(procs)
						defer runtime.GOMAXPROCS(prev)
						c = make([]float32, m*d.ldc)
						p.Gemm(ta, tb, m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 0, c, d.ldc)
						pre, out = make([]float32, m*tc.n), make([]float32, m*tc.n)
						p.GemmBiasGELU(ta, tb, m, tc.n, tc.k, d.a, d.lda, d.b, d.ldb, bias, pre, tc.n, out, tc.n)
						return c, pre, out
					}
					c1, pre1, out1 := run(1)
					for _, procs := range []int{2, 3, 4, 8, 32, 64} {
						c4, pre4, out4 := run(procs)
						for i := 0; i < m; i++ {
							for j := 0; j < tc.n; j++ {
								a, b := c1[i*d.ldc+j], c4[i*d.ldc+j]
								if math.Float32bits(a) != math.Float32bits(b) {
									t.Fatalf("%+v: C[%d,%d] = %v with one thread, %v with %d", tc, i, j, a, b, procs)
								}
								if pre1[i*tc.n+j] != pre4[i*tc.n+j] || out1[i*tc.n+j] != out4[i*tc.n+j] {
									t.Fatalf("%+v: GemmBiasGELU [%d,%d] differs between 1 and %d threads", tc, i, j, procs)
								}
								if want := a + bias[j]; pre1[i*tc.n+j] != want {
									t.Fatalf("%+v: pre[%d,%d] = %v, want Gemm's %v + bias", tc, i, j, pre1[i*tc.n+j], want)
								}
							}
						}
					}
				}
			}
		})
	}
}
