//go:build unix

package kernels

import (
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// TestGemmBF16ComputeGuardPages places A, B and C (and W's words) flush
// against an unmapped page, at their end and then at their start, so
// that a packer or micro-kernel touching one element outside them
// faults: every transpose, m across the 14-row slivers, n across the
// 16-column vectors and 32-column panels, k odd and even, below and
// across a 32-float conversion block, leading dimensions equal to the
// row length.
func TestGemmBF16ComputeGuardPages(t *testing.T) {
	ms := []int{1, 2, 13, 14, 15, 29}
	ns := []int{1, 15, 16, 17, 31, 32, 33, 48, 65}
	ks := []int{1, 2, 3, 32, 33, 65}
	if testing.Short() {
		ms, ns, ks = []int{1, 15}, []int{17, 33}, []int{3, 33}
	}
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			r := newRand(11)
			for _, side := range []guard.Side{guard.End, guard.Start} {
				for ti := 0; ti < 4; ti++ {
					ta, tb := ti&1 != 0, ti&2 != 0
					for _, m := range ms {
						for _, n := range ns {
							for _, k := range ks {
								tc := gemmCase{transA: ta, transB: tb, m: m, n: n, k: k, alpha: 1, beta: float32(n % 2)}
								d := tc.data(r)
								ref, bound := bf16Ref(m, n, k, 1, opAt(d.a, ta, d.lda), opAt(d.b, tb, d.ldb), tc.beta, d.c, d.ldc)
								ga, ba := guard.Copy(d.a, side)
								gb, bb := guard.Copy(d.b, side)
								gc, bc := guard.Copy(d.c, side)
								p.GemmBF16Compute(ta, tb, m, n, k, 1, ga, d.lda, gb, d.ldb, tc.beta, gc, d.ldc)
								checkBF16(t, "guarded", gc, d.ldc, m, n, ref, bound)
								if !ta && !tb {
									// The weights: W's words guarded too.
									w := lowbit.BF16FromKN(d.b, k, n)
									words, bw := guardWords(w.Data, side)
									wg := &lowbit.BF16{N: n, K: k, Data: words}
									for i := range gc {
										gc[i] = 0
									}
									wt := w.Float32()
									ref, bound := bf16Ref(m, n, k, 1, opAt(d.a, false, d.lda), opAt(wt, true, k), 0, gc, d.ldc)
									p.GemmBF16ComputeWeights(m, 1, ga, d.lda, wg, 0, gc, d.ldc)
									checkBF16(t, "guarded weights", gc, d.ldc, m, n, ref, bound)
									wg, words = nil, nil
									bw.Free()
								}
								ga, gb, gc = nil, nil, nil
								ba.Free()
								bb.Free()
								bc.Free()
							}
						}
					}
				}
			}
		})
	}
}

// guardWords returns a guarded copy of a BF16 matrix's words (its length
// is a multiple of 32, so whole float32s) and its buffer.
func guardWords(src []uint16, side guard.Side) ([]uint16, *guard.Buffer) {
	g, b := guard.Alloc(len(src)/2, side)
	data := unsafe.Slice((*uint16)(unsafe.Pointer(&g[0])), len(src))
	copy(data, src)
	return data, b
}
