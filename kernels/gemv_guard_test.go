//go:build unix

package kernels

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
)

// TestGemvGuardPages places A, x and y flush against an unmapped page (at
// their end, then at their start), with lda = n (no slack), so that a
// kernel touching one element outside them faults; the sizes cross every
// vector, unroll and row-block edge.
func TestGemvGuardPages(t *testing.T) {
	sizes := []int{1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 47, 65, 129}
	if testing.Short() {
		sizes = []int{1, 3, 8, 9, 17, 33}
	}
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			seed := uint64(1)
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, trans := range []bool{false, true} {
					for _, m := range sizes {
						for _, n := range sizes {
							tc := gemvCase{trans: trans, m: m, n: n, alpha: 1, beta: float32(n % 2)}
							d := tc.data(newRand(seed))
							seed++
							ref, mag := gemvRef(tc, d)
							ga, ba := guard.Copy(d.a, side)
							gx, bx := guard.Copy(d.x, side)
							gy, by := guard.Copy(d.y, side)
							p.Gemv(trans, m, n, 1, ga, d.lda, gx, tc.beta, gy)
							for i := range gy {
								if !closeTo(gy[i], float32(ref[i]), gemmTol(d.xlen, mag[i])) {
									t.Fatalf("%+v side %d: y[%d] = %v, want %v", tc, side, i, gy[i], ref[i])
								}
							}
							ga, gx, gy = nil, nil, nil
							ba.Free()
							bx.Free()
							by.Free()
						}
					}
				}
			}
		})
	}
}
