//go:build (amd64 || arm64) && !purego

package kernels

import (
	"math"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
)

// alignedCopy returns a copy of s whose first element is 64-byte aligned.
func alignedCopy(s []float32) []float32 {
	buf := make([]float32, len(s)+16)
	off := int(uintptr(unsafe.Pointer(&buf[0]))%64) / 4
	if off > 0 {
		off = 16 - off
	}
	out := buf[off : off+len(s) : off+len(s)]
	copy(out, s)
	return out
}

// TestGemmBInPlace covers the path on which the kernels read the full
// panels of an untransposed B where it is (aligned rows, a stride that is
// a multiple of 16 floats, few rows of A) and pack only a partial last
// panel; the other tests mostly take the packed path, as their strides
// are odd.
func TestGemmBInPlace(t *testing.T) {
	ms := []int{1, 2, 5, 6, 7, 13, 14, 15, 28, 29, 50, 64}
	ns := []int{16, 31, 32, 33, 48, 64, 65, 96, 128}
	ks := []int{1, 3, 4, 5, 17, 260}
	for _, p := range gemmNonGeneric() {
		seed := uint64(500)
		for _, ta := range []bool{false, true} {
			for _, m := range ms {
				for _, n := range ns {
					for _, k := range ks {
						if m*n*k > 1<<21 {
							continue
						}
						seed++
						r := newRand(seed)
						tc := gemmCase{transA: ta, m: m, n: n, k: k, alpha: 1, beta: float32(seed%2) * 0.5}
						ar, ac := opShape(ta, m, k)
						d := gemmData{lda: ac, ldb: (n+15)&^15 + 16*int(seed%2), ldc: n}
						d.a = randSlice(r, ar*d.lda)
						d.b = alignedCopy(randSlice(r, k*d.ldb))
						d.c = randSlice(r, m*d.ldc)
						if !gemm.BInPlace(false, m, d.b, d.ldb) {
							t.Fatalf("%s m=%d n=%d k=%d ldb=%d: B not read in place", p.Name(), m, n, k, d.ldb)
						}
						ref, mag := gemmRef(tc, d)
						p.Gemm(ta, false, m, n, k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								got, want := d.c[i*d.ldc+j], ref[i*n+j]
								if math.Abs(float64(got)-want) > gemmTol(k, mag[i*n+j]) {
									t.Fatalf("%s %+v ldb=%d: C[%d,%d] = %v, want %v", p.Name(), tc, d.ldb, i, j, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmAWide covers an untransposed A in blocks of many column panels
// (n from 8 NR up, past a column block), read in place when its rows
// spread over the L1 sets and packed when they do not (lda a multiple of
// 1024 floats: see gemm.Driver.AInPlace), with rows past the last full
// sliver, against a float64 reference.
func TestGemmAWide(t *testing.T) {
	for _, p := range gemmNonGeneric() {
		seed := uint64(900)
		for _, m := range []int{14, 29, 100} {
			for _, n := range []int{128, 257, 520, 1600} {
				for _, k := range []int{5, 130} {
					for _, lda := range []int{k, k + 3, 1024, 2048, 1536} {
						if m*n > 1<<17 && lda != k {
							continue
						}
						seed++
						r := newRand(seed)
						tc := gemmCase{m: m, n: n, k: k, alpha: 1, beta: float32(seed%2) * 0.5}
						d := gemmData{lda: lda, ldb: n, ldc: n}
						d.a = randSlice(r, (m-1)*lda+k)
						d.b = randSlice(r, k*n)
						d.c = randSlice(r, m*n)
						ref, mag := gemmRef(tc, d)
						p.Gemm(false, false, m, n, k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								got, want := d.c[i*n+j], ref[i*n+j]
								if math.Abs(float64(got)-want) > gemmTol(k, mag[i*n+j]) {
									t.Fatalf("%s m=%d n=%d k=%d lda=%d: C[%d,%d] = %v, want %v", p.Name(), m, n, k, lda, i, j, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}
