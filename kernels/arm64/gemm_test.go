//go:build arm64 && !purego

package arm64

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// TestMicroKernelEdges checks the NEON micro-kernels against the contract
// every micro-kernel of the blocked driver has (blocked.KernelFunc), over
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
	for _, mk := range []blocked.MicroKernel{kernelsNEON.Wide, kernelsNEON.Narrow} {
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
	c := blocked.CachesOf(cpuinfo.Read())
	g := gemmNEON
	want := blocked.Model(c, g.Wide.MR, g.Wide.NR, g.PanelStride)
	got := g.Blocking()
	t.Logf("neon %dx%d on %+v: %+v", g.Wide.MR, g.Wide.NR, c, got)
	if os.Getenv(blocked.EnvBlocking) == "" && got != want {
		t.Errorf("neon %dx%d GEMM blocked %+v; the model gives %+v for %+v", g.Wide.MR, g.Wide.NR, got, want, c)
	}
}

// TestGemmBiasGELUBlockings runs the set's GemmBiasGELU under blockings
// of a few tiles (so that the epilogue runs per sliver of many row and
// column blocks, after several blocks of k) and the model's, with odd
// leading dimensions: pre and out must be bitwise the set's Gemm followed
// by its BiasGELU.
func TestGemmBiasGELUBlockings(t *testing.T) {
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
	for _, bl := range []blocked.Blocking{{KC: 37, MC: 2 * mr, NC: 2 * nr}, {KC: 64, MC: mr, NC: 3 * nr}, model} {
		g.SetBlocking(bl)
		for _, s := range [][3]int{{100, 130, 300}, {61, 70, 500}, {29, 200, 129}, {14, 33, 7}, {15, 17, 0}} {
			m, n, k := s[0], s[1], s[2]
			for tr := 0; tr < 4; tr++ {
				transA, transB := tr&1 != 0, tr&2 != 0
				lda, ldb, ldpre, ldout := k+1, n+3, n+5, n+1
				ar, br := m, k
				if transA {
					lda, ar = m+3, k
				}
				if transB {
					ldb, br = k+5, n
				}
				a, b := rnd(ar*lda), rnd(br*ldb)
				bias := rnd(n)
				pre, out := rnd(m*ldpre), rnd(m*ldout)
				want, wantOut := append([]float32(nil), pre...), append([]float32(nil), out...)
				g.Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, want, ldpre)
				biasGeluNEON(m, n, want, ldpre, bias, wantOut, ldout)
				gemmBiasGeluNEON(transA, transB, m, n, k, a, lda, b, ldb, bias, pre, ldpre, out, ldout)
				for i := range want {
					if math.Float32bits(pre[i]) != math.Float32bits(want[i]) {
						t.Fatalf("blocking %+v, %dx%dx%d trans %v %v: pre[%d] = %v, want %v", bl, m, n, k, transA, transB, i, pre[i], want[i])
					}
				}
				for i := range wantOut {
					if math.Float32bits(out[i]) != math.Float32bits(wantOut[i]) {
						t.Fatalf("blocking %+v, %dx%dx%d trans %v %v: out[%d] = %v, want %v", bl, m, n, k, transA, transB, i, out[i], wantOut[i])
					}
				}
			}
		}
	}
}
