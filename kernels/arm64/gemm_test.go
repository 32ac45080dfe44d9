//go:build arm64 && !purego

package arm64

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// TestMicroKernelEdges checks the NEON micro-kernels against the contract
// every micro-kernel of the blocked driver has (gemm.KernelFunc), over
// every tile corner (rows 1..8, cols 1..nr) against a float64 product:
// elements of C outside the rows×cols corner stay untouched, and C is not
// read when beta is 0 (NaN there must not propagate).
func TestMicroKernelEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 0x5eed))
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = r.Float32()*2 - 1
		}
		return s
	}
	ps := kernelsNEON.PanelStride
	for _, mk := range []gemm.MicroKernel{kernelsNEON.Wide, kernelsNEON.Narrow} {
		for _, k := range []int{0, 1, 5, 33, 256} {
			const ldc = 17
			a := rnd(ps * max(k, 1)) // packed: A(i,p) at a[p*ps+i]
			b := rnd(max(k, 1) * mk.NR)
			for rows := 1; rows <= mk.MR; rows++ {
				for cols := 1; cols <= mk.NR; cols++ {
					for _, beta := range []float32{0, 0.5} {
						c0 := rnd(mk.MR * ldc)
						c := append([]float32(nil), c0...)
						if beta == 0 {
							for i := range c {
								if i%ldc < cols && i/ldc < rows {
									c[i] = float32(math.NaN()) // must not be read
								}
							}
						}
						const alpha = -1.5
						mk.Packed(k, &a[0], 0, 0, &b[0], mk.NR, &c[0], ldc, rows, cols, alpha, beta)
						for i := 0; i < mk.MR; i++ {
							for j := 0; j < ldc; j++ {
								got := c[i*ldc+j]
								if i >= rows || j >= cols {
									if got != c0[i*ldc+j] {
										t.Fatalf("%dx%d k=%d corner %dx%d: C[%d,%d] outside the corner changed", mk.MR, mk.NR, k, rows, cols, i, j)
									}
									continue
								}
								want, mag := 0.0, 0.0
								for p := 0; p < k; p++ {
									v := float64(a[p*ps+i]) * float64(b[p*mk.NR+j])
									want += v
									mag += math.Abs(v)
								}
								want *= alpha
								if beta != 0 {
									want += float64(beta) * float64(c0[i*ldc+j])
								}
								if math.Abs(float64(got)-want) > 1e-5*(1.5*mag+1) {
									t.Fatalf("%dx%d k=%d corner %dx%d beta=%v: C[%d,%d] = %v, want %v", mk.MR, mk.NR, k, rows, cols, beta, i, j, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestBlockingFromCPU checks that the GEMM of this package is blocked by
// the cache model for the caches this CPU reports (unless
// SIMDGPT_BLOCKING overrides it), and logs the blocking.
func TestBlockingFromCPU(t *testing.T) {
	c := gemm.CachesOf(cpuinfo.Read())
	g := gemmNEON
	want := gemm.Model(c, g.Wide.MR, g.Wide.NR, g.PanelStride)
	got := g.Blocking()
	t.Logf("neon %dx%d on %+v: %+v", g.Wide.MR, g.Wide.NR, c, got)
	if os.Getenv(gemm.EnvBlocking) == "" && got != want {
		t.Errorf("neon %dx%d GEMM blocked %+v; the model gives %+v for %+v", g.Wide.MR, g.Wide.NR, got, want, c)
	}
}

// TestFusedGemmBlockings runs the set's fused GEMMs (GemmBiasGELU,
// GemmBias) under blockings
// of a few tiles (so that the epilogue runs per sliver of many row and
// column blocks, after several blocks of k) and the model's, with odd
// leading dimensions: C and the epilogue's matrix must be bitwise the
// set's Gemm followed by its row kernels over the whole matrix.
func TestFusedGemmBlockings(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	g := gemmNEON
	model := g.Blocking()
	defer g.SetBlocking(model)
	mr, nr := g.Wide.MR, g.Wide.NR
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	type call func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, vec, mat []float32, ldmat int)
	fused := []struct {
		name     string
		call     call
		epi      gemm.EpilogueFunc
		vec, mat bool // whether it takes a vector, a matrix
	}{
		{"GemmBiasGELU", func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, vec, mat []float32, ldmat int) {
			gemmNEON.GemmBiasGELU(transA, transB, m, n, k, a, lda, b, ldb, vec, c, ldc, mat, ldmat)
		}, biasGeluNEON, true, true},
		{"GemmBias", func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, vec, _ []float32, _ int) {
			gemmNEON.GemmBias(transA, transB, m, n, k, a, lda, b, ldb, vec, c, ldc)
		}, gemmNEON.Bias, true, false},
	}
	for _, f := range fused {
		for _, bl := range []gemm.Blocking{{KC: 37, MC: 2 * mr, NC: 2 * nr}, {KC: 64, MC: mr, NC: 3 * nr}, model} {
			g.SetBlocking(bl)
			for _, s := range [][3]int{{100, 130, 300}, {61, 70, 500}, {29, 200, 129}, {14, 33, 7}, {15, 17, 0}, {3, 70, 40}} {
				m, n, k := s[0], s[1], s[2]
				for tr := 0; tr < 4; tr++ {
					transA, transB := tr&1 != 0, tr&2 != 0
					lda, ldb, ldc, ldmat := k+1, n+3, n+5, n+1
					ar, br := m, k
					if transA {
						lda, ar = m+3, k
					}
					if transB {
						ldb, br = k+5, n
					}
					a, b := rnd(ar*lda), rnd(br*ldb)
					var vec, mat, wantMat []float32
					if f.vec {
						vec = rnd(n)
					}
					if f.mat {
						mat = rnd(m * ldmat)
						wantMat = append([]float32(nil), mat...)
					}
					c := rnd(m * ldc)
					want := append([]float32(nil), c...)
					g.Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
					f.epi(m, n, want, ldc, vec, wantMat, ldmat)
					f.call(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, vec, mat, ldmat)
					for i := range want {
						if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s blocking %+v, %dx%dx%d trans %v %v: c[%d] = %v, want %v", f.name, bl, m, n, k, transA, transB, i, c[i], want[i])
						}
					}
					for i := range wantMat {
						if math.Float32bits(mat[i]) != math.Float32bits(wantMat[i]) {
							t.Fatalf("%s blocking %+v, %dx%dx%d trans %v %v: mat[%d] = %v, want %v", f.name, bl, m, n, k, transA, transB, i, mat[i], wantMat[i])
						}
					}
				}
			}
		}
	}
}
