//go:build unix

package kernels

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestGemmGuardPages places A, B and C flush against an unmapped page (at
// their end, then at their start) so that a kernel or packing routine
// touching one element outside them faults. Sizes cross every micro-tile
// edge: every m from 1 to MR+1 (so every edge kernel for a short last row
// of tiles runs) and 2·MR+1, n up to 2·NR+6, k across the unroll tail, with
// leading dimensions equal to the row length (no slack at all).
func TestGemmGuardPages(t *testing.T) {
	ms := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 29}
	ks := []int{1, 3, 4, 5, 9}
	if testing.Short() {
		ms, ks = []int{1, 7, 8, 15}, []int{1, 5}
	}
	for _, p := range gemmNonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			r := newRand(9)
			arenas := newGuardArenas(3)
			defer arenas.free()
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for ti := 0; ti < 4; ti++ {
					ta, tb := ti&1 != 0, ti&2 != 0
					for _, m := range ms {
						for n := 1; n <= 70; n++ {
							for _, k := range ks {
								tc := gemmCase{transA: ta, transB: tb, m: m, n: n, k: k, alpha: 1, beta: float32(n % 2)}
								d := tc.data(r)
								want := append([]float32(nil), d.c...)
								genericImpl.Gemm(ta, tb, m, n, k, 1, d.a, d.lda, d.b, d.ldb, tc.beta, want, d.ldc)
								ga, gb, gc := arenas.copy(0, d.a, side), arenas.copy(1, d.b, side), arenas.copy(2, d.c, side)
								p.Gemm(ta, tb, m, n, k, 1, ga, d.lda, gb, d.ldb, tc.beta, gc, d.ldc)
								_, mag := gemmRef(tc, d)
								for i := range want {
									if !closeTo(gc[i], want[i], 2*gemmTol(k, mag[i])) {
										t.Fatalf("%+v side %d: C[%d] = %v, want %v", tc, side, i, gc[i], want[i])
									}
								}
							}
						}
					}
				}
			}
		})
	}
}

// TestMaskedScoresGuardPages does the same for MaskedScores.
func TestMaskedScoresGuardPages(t *testing.T) {
	for _, p := range gemmNonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			r := newRand(10)
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for tq := 1; tq <= 30; tq++ {
					for _, tk := range []int{1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 65} {
						for _, d := range []int{1, 3, 8, 13} {
							q, k := randSlice(r, tq*d), randSlice(r, tk*d)
							off := tk - tq
							want := make([]float32, tq*tk)
							genericImpl.MaskedScores(tq, tk, d, 0.5, q, d, k, d, off, want, tk)
							gq, bq := guard.Copy(q, side)
							gk, bk := guard.Copy(k, side)
							gs, bs := guard.Alloc(tq*tk, side)
							p.MaskedScores(tq, tk, d, 0.5, gq, d, gk, d, off, gs, tk)
							for i := range want {
								if !closeTo(gs[i], want[i], 1e-5) {
									t.Fatalf("tq=%d tk=%d d=%d: S[%d] = %v, want %v", tq, tk, d, i, gs[i], want[i])
								}
							}
							gq, gk, gs = nil, nil, nil
							bq.Free()
							bk.Free()
							bs.Free()
						}
					}
				}
			}
		})
	}
}

// TestGemmBiasGELUGuardPages does the same for GemmBiasGELU, with bias,
// pre and out flush against the page too: the epilogue must not touch
// anything beyond the rows and columns of its sliver. Results must be
// bitwise those on ordinary memory.
func TestGemmBiasGELUGuardPages(t *testing.T) {
	ms := []int{1, 2, 3, 5, 7, 8, 9, 13, 14, 15, 29}
	ns := []int{1, 2, 3, 4, 5, 7, 8, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65, 70}
	ks := []int{0, 1, 5, 9}
	if testing.Short() {
		ms, ns, ks = []int{1, 7, 8, 15}, []int{1, 3, 16, 17, 33, 65}, []int{0, 5}
	}
	for _, p := range gemmNonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			r := newRand(11)
			arenas := newGuardArenas(5)
			defer arenas.free()
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for ti := 0; ti < 4; ti++ {
					ta, tb := ti&1 != 0, ti&2 != 0
					for _, m := range ms {
						for _, n := range ns {
							for _, k := range ks {
								tc := gemmCase{transA: ta, transB: tb, m: m, n: n, k: k}
								d := tc.data(r)
								bias := randSlice(r, n)
								want, wantOut := make([]float32, m*n), make([]float32, m*n)
								p.GemmBiasGELU(ta, tb, m, n, k, d.a, d.lda, d.b, d.ldb, bias, want, n, wantOut, n)
								ga, gb, gbias := arenas.copy(0, d.a, side), arenas.copy(1, d.b, side), arenas.copy(2, bias, side)
								pre, out := arenas.copy(3, make([]float32, m*n), side), arenas.copy(4, make([]float32, m*n), side)
								p.GemmBiasGELU(ta, tb, m, n, k, ga, d.lda, gb, d.ldb, gbias, pre, n, out, n)
								for i := range want {
									if !bitsEqual(pre[i], want[i]) || !bitsEqual(out[i], wantOut[i]) {
										t.Fatalf("%+v side %d: pre, out[%d] = %v, %v, want %v, %v", tc, side, i, pre[i], out[i], want[i], wantOut[i])
									}
								}
							}
						}
					}
				}
			}
		})
	}
}

// guardArenas are the guard arenas of a test's operands, one an operand,
// each mapped once and reused case after case (guard.Arena): a fresh
// mapping per operand per case made the guard-page tests spend most of
// their time in mmap and munmap.
type guardArenas []*guard.Arena

// guardArenaFloats is the size of each arena: more than any operand of
// the guard-page tests that use them.
const guardArenaFloats = 1 << 14

func newGuardArenas(n int) guardArenas {
	a := make(guardArenas, n)
	for i := range a {
		a[i] = guard.NewArena(guardArenaFloats)
	}
	return a
}

// copy returns a copy of src flush against arena i's guard on side; the
// previous slice of arena i must no longer be used.
func (a guardArenas) copy(i int, src []float32, side guard.Side) []float32 {
	return a[i].Copy(src, side)
}

func (a guardArenas) free() {
	for _, x := range a {
		x.Free()
	}
}
