//go:build amd64 && !purego

package amd64

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// TestBlockingFromCPU checks that the GEMMs of this package are blocked by
// the cache model for the caches this CPU reports (unless
// SIMDGPT_BLOCKING overrides it), and logs the blocking.
func TestBlockingFromCPU(t *testing.T) {
	info := cpuinfo.Read()
	c := gemm.CachesOf(info)
	overridden := os.Getenv(gemm.EnvBlocking) != ""
	for _, d := range []struct {
		name string
		g    *gemm.Driver
	}{{"avx2", gemmAVX2}, {"avx512", gemmAVX512}} {
		g := d.g
		want := gemm.Model(c, g.Wide.MR, g.Wide.NR, g.PanelStride)
		got := g.Blocking()
		t.Logf("%s %dx%d on %+v: %+v", d.name, g.Wide.MR, g.Wide.NR, c, got)
		if overridden {
			continue
		}
		if got != want {
			t.Errorf("%s %dx%d GEMM blocked %+v; the model gives %+v for %+v", d.name, g.Wide.MR, g.Wide.NR, got, want, c)
		}
	}
}

// TestBlockings runs the assembly kernels under the blockings the model
// picks for other cores, the constants this package used before the model
// (kc 160, mc 448, nc 800 for AVX-512 and 256, 384, 512 for AVX2 on this
// machine's caches) and blocks of a few tiles, on shapes that cross their
// boundaries, against a float64 reference.
func TestBlockings(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range []struct {
		name string
		g    *gemm.Driver
		bs   []gemm.Blocking
	}{
		{"avx512", gemmAVX512, []gemm.Blocking{{KC: 160, MC: 448, NC: 800}, {KC: 224, MC: 1792, NC: 2048}, {KC: 37, MC: 28, NC: 64}}},
		{"avx2", gemmAVX2, []gemm.Blocking{{KC: 256, MC: 384, NC: 512}, {KC: 448, MC: 1644, NC: 512}, {KC: 37, MC: 12, NC: 32}}},
	} {
		if !hasAVX2 || d.name == "avx512" && !hasAVX512 {
			continue
		}
		model := d.g.Blocking()
		for _, b := range d.bs {
			d.g.SetBlocking(b)
			for _, s := range [][3]int{{100, 130, 300}, {61, 70, 500}} {
				m, n, k := s[0], s[1], s[2]
				for tr := 0; tr < 4; tr++ {
					transA, transB := tr&1 != 0, tr&2 != 0
					a, b2, c := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
					lda, ldb := k, n
					if transA {
						lda = m
					}
					if transB {
						ldb = k
					}
					c0 := append([]float32(nil), c...)
					d.g.Gemm(transA, transB, m, n, k, 1, a, lda, b2, ldb, 0.5, c, n)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var want, mag float64
							for p := 0; p < k; p++ {
								ai, bi := i*lda+p, p*ldb+j
								if transA {
									ai = p*lda + i
								}
								if transB {
									bi = j*ldb + p
								}
								v := float64(a[ai]) * float64(b2[bi])
								want += v
								mag += math.Abs(v)
							}
							want += 0.5 * float64(c0[i*n+j])
							if got := c[i*n+j]; math.Abs(float64(got)-want) > 1e-5*(mag+1) {
								d.g.SetBlocking(model)
								t.Fatalf("%s blocking %+v, %dx%dx%d trans %v %v: C[%d,%d] = %v, want %v", d.name, b, m, n, k, transA, transB, i, j, got, want)
							}
						}
					}
				}
			}
		}
		d.g.SetBlocking(model)
	}
}

func randFloats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// fusedGemm is one of a set's fused GEMMs (GemmBiasGELU, GemmBias) called
// in the terms of gemm.GemmEpilogue, with the set's epilogue it must
// match.
type fusedGemm struct {
	name     string
	call     func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, vec, mat []float32, ldmat int)
	epi      gemm.EpilogueFunc
	vec, mat bool // whether it takes a vector, a matrix
}

// fusedGemms returns the fused GEMMs of the AVX-512 (avx512) or AVX2 set.
func fusedGemms(avx512 bool) []fusedGemm {
	f := familyAVX2(tileFor("avx2", thisCPU))
	if avx512 {
		f = familyAVX512(tileFor("avx512", thisCPU))
	}
	biasGELU, bias := f.BiasGELU, f.Bias
	gemmBiasGELU, gemmBias := f.GemmBiasGELU, f.GemmBias
	return []fusedGemm{
		{"GemmBiasGELU", func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, vec, mat []float32, ldmat int) {
			gemmBiasGELU(transA, transB, m, n, k, a, lda, b, ldb, vec, c, ldc, mat, ldmat)
		}, biasGELU, true, true},
		{"GemmBias", func(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, vec, _ []float32, _ int) {
			gemmBias(transA, transB, m, n, k, a, lda, b, ldb, vec, c, ldc)
		}, bias, true, false},
	}
}

// TestFusedGemmBlockings runs each set's fused GEMMs (GemmBiasGELU,
// GemmBias) under blockings
// of a few tiles (so that the epilogue runs per sliver of many row and
// column blocks, after several blocks of k) and the model's, with odd
// leading dimensions: C and the epilogue's matrix must be bitwise the
// set's Gemm followed by its row kernels over the whole matrix.
func TestFusedGemmBlockings(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, d := range []struct {
		name string
		g    *gemm.Driver
	}{{"avx512", gemmAVX512}, {"avx2", gemmAVX2}} {
		if !hasAVX2 || d.name == "avx512" && !hasAVX512 {
			continue
		}
		model := d.g.Blocking()
		mr, nr := d.g.Wide.MR, d.g.Wide.NR
		for _, f := range fusedGemms(d.name == "avx512") {
			for _, b := range []gemm.Blocking{{KC: 37, MC: 2 * mr, NC: 2 * nr}, {KC: 64, MC: mr, NC: 3 * nr}, model} {
				d.g.SetBlocking(b)
				for _, s := range [][3]int{{100, 130, 300}, {61, 70, 500}, {29, 200, 129}, {14, 33, 7}, {15, 17, 0}, {3, 70, 40}} {
					m, n, k := s[0], s[1], s[2]
					for tr := 0; tr < 4; tr++ {
						fusedGemmCase(t, r, d.name+" "+f.name, b, d.g, f, tr&1 != 0, tr&2 != 0, m, n, k)
					}
				}
			}
		}
		d.g.SetBlocking(model)
	}
}

// fusedGemmCase runs one case of TestFusedGemmBlockings.
func fusedGemmCase(t *testing.T, r *rand.Rand, name string, bl gemm.Blocking, g *gemm.Driver, f fusedGemm, transA, transB bool, m, n, k int) {
	t.Helper()
	lda, ldb, ldc, ldmat := k+1, n+3, n+5, n+1
	ar, br := m, k
	if transA {
		lda, ar = m+3, k
	}
	if transB {
		ldb, br = k+5, n
	}
	a, b := randFloats(r, ar*lda), randFloats(r, br*ldb)
	var vec, mat, wantMat []float32
	if f.vec {
		vec = randFloats(r, n)
	}
	if f.mat {
		mat = randFloats(r, m*ldmat)
		wantMat = append([]float32(nil), mat...)
	}
	c := randFloats(r, m*ldc)
	want := append([]float32(nil), c...)
	g.Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
	f.epi(m, n, want, ldc, vec, wantMat, ldmat)
	f.call(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, vec, mat, ldmat)
	for i := range want {
		if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s blocking %+v, %dx%dx%d trans %v %v: c[%d] = %v, want %v", name, bl, m, n, k, transA, transB, i, c[i], want[i])
		}
	}
	for i := range wantMat {
		if math.Float32bits(mat[i]) != math.Float32bits(wantMat[i]) {
			t.Fatalf("%s blocking %+v, %dx%dx%d trans %v %v: mat[%d] = %v, want %v", name, bl, m, n, k, transA, transB, i, mat[i], wantMat[i])
		}
	}
}
