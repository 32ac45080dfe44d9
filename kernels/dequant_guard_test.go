//go:build unix

package kernels

import (
	"math"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/generic"
	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// TestDequantizeInt8GuardPages places W's blocks and D flush against an
// unmapped page, at their end and then at their start, so that reading or
// writing one byte outside them faults.
func TestDequantizeInt8GuardPages(t *testing.T) {
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for i, k := range []int{1, 31, 32, 33, 64, 65, 97} {
				for _, side := range []guard.Side{guard.End, guard.Start} {
					src := dequantWeights(uint64(i+1), 3, k)
					size := int(unsafe.Sizeof(lowbit.Int8Block{})) / 4
					g, bw := guard.Alloc(len(src.Blocks)*size, side)
					blocks := unsafe.Slice((*lowbit.Int8Block)(unsafe.Pointer(&g[0])), len(src.Blocks))
					copy(blocks, src.Blocks)
					w := &lowbit.Int8{N: 3, K: k, Blocks: blocks}
					want := make([]float32, 3*k)
					generic.DequantizeInt8(src, 0, 3, want, k)
					d, bd := guard.Alloc(3*k, side)
					p.DequantizeInt8(w, 0, 3, d, k)
					for q := range want {
						if math.Float32bits(d[q]) != math.Float32bits(want[q]) {
							t.Fatalf("k=%d side %d: d[%d] = %v, want %v", k, side, q, d[q], want[q])
						}
					}
					w, blocks, d = nil, nil, nil
					bw.Free()
					bd.Free()
				}
			}
		})
	}
}

// TestGemmDequantInt8GuardPages places W's blocks, A and C flush against
// an unmapped page, at their end and then at their start, with enough
// rows of A for the packing path, so that reading W, A or C one byte
// outside them faults.
func TestGemmDequantInt8GuardPages(t *testing.T) {
	const m, n = 20, 33
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for i, k := range []int{16, 31, 33, 64, 97} {
				for _, side := range []guard.Side{guard.End, guard.Start} {
					src := dequantWeights(uint64(i+1), n, k)
					size := int(unsafe.Sizeof(lowbit.Int8Block{})) / 4
					g, bw := guard.Alloc(len(src.Blocks)*size, side)
					blocks := unsafe.Slice((*lowbit.Int8Block)(unsafe.Pointer(&g[0])), len(src.Blocks))
					copy(blocks, src.Blocks)
					w := &lowbit.Int8{N: n, K: k, Blocks: blocks}
					a, ba := guard.Alloc(m*k, side)
					for q := range a {
						a[q] = float32(q%7) - 3
					}
					d := make([]float32, n*k)
					p.DequantizeInt8(src, 0, n, d, k)
					want := make([]float32, m*n)
					p.Gemm(false, true, m, n, k, 1, a, k, d, k, 0, want, n)
					c, bc := guard.Alloc(m*n, side)
					p.GemmDequantInt8(m, 1, a, k, w, 0, c, n)
					for q := range want {
						if math.Float32bits(c[q]) != math.Float32bits(want[q]) {
							t.Fatalf("k=%d side %d: c[%d] = %v, want %v", k, side, q, c[q], want[q])
						}
					}
					w, blocks, a, c = nil, nil, nil, nil
					bw.Free()
					ba.Free()
					bc.Free()
				}
			}
		})
	}
}
