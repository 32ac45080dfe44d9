//go:build unix

package kernels

import (
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// TestLowbitGuardPages places W's storage, A and C flush against an
// unmapped page (at their end, then at their start), with lda = k and
// ldc = n (no slack), so that a kernel touching one byte outside them
// faults; the sizes cross every group tail, row block and row count.
func TestLowbitGuardPages(t *testing.T) {
	ms := []int{1, 2, 3, 4, 5, 7, 8, 9}
	sizes := []int{1, 2, 3, 5, 8, 9, 17, 31, 33, 64, 65}
	if testing.Short() {
		ms, sizes = []int{1, 3, 8, 9}, []int{1, 9, 31, 33}
	}
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			seed := uint64(1)
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for _, f := range lowbitFormats {
					for _, m := range ms {
						for _, n := range sizes {
							for _, k := range sizes {
								seed++
								tc := lowbitCase{m: m, n: n, k: k, alpha: 1, beta: float32(seed % 2)}
								d := tc.data(f, newRand(seed))
								ref, tol := lowbitRef(p, f, tc, d)
								var w any
								var bw *guard.Buffer
								switch src := d.w.(type) {
								case *lowbit.BF16:
									g, b := guard.Alloc(len(src.Data)/2, side)
									data := unsafe.Slice((*uint16)(unsafe.Pointer(&g[0])), len(src.Data))
									copy(data, src.Data)
									w, bw = &lowbit.BF16{N: n, K: k, Data: data}, b
								case *lowbit.Int8:
									size := int(unsafe.Sizeof(lowbit.Int8Block{})) / 4
									g, b := guard.Alloc(len(src.Blocks)*size, side)
									blocks := unsafe.Slice((*lowbit.Int8Block)(unsafe.Pointer(&g[0])), len(src.Blocks))
									copy(blocks, src.Blocks)
									w, bw = &lowbit.Int8{N: n, K: k, Blocks: blocks}, b
								}
								ga, ba := guard.Copy(d.a, side)
								gc, bc := guard.Copy(d.c, side)
								f.gemm(p, m, 1, ga, d.lda, w, tc.beta, gc, d.ldc)
								for i := 0; i < m; i++ {
									for j := 0; j < n; j++ {
										if !closeTo(gc[i*d.ldc+j], float32(ref[i*n+j]), tol[i*n+j]) {
											t.Fatalf("%s %v side %d: C[%d][%d] = %v, want %v", f.name, tc, side, i, j, gc[i*d.ldc+j], ref[i*n+j])
										}
									}
								}
								w, ga, gc = nil, nil, nil
								bw.Free()
								ba.Free()
								bc.Free()
							}
						}
					}
				}
			}
		})
	}
}
