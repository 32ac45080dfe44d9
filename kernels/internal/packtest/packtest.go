//go:build unix

// Package packtest checks the kernels that convert the GEMM's operands
// from and to low-bit formats as it packs them, of every architecture:
// the packers of B panels from low-bit weights (gemm.GroupedSource's
// kernels) against the weights' own accessors, and the bfloat16 rounding
// and widening of gemm.Family. The tests of kernels/amd64 and
// kernels/arm64 share it.
package packtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/simdgpt/simdgpt/kernels/internal/bf16compute"
	"github.com/simdgpt/simdgpt/kernels/internal/gemm"
	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/internal/lowbit"
	weights "github.com/simdgpt/simdgpt/kernels/lowbit"
)

// Int8 checks the dequantizing packer pack of int8 weights (through
// lowbit.Int8Source) against W.At bit for bit (CheckPackB's panels), with
// W's blocks ending, and then starting, flush against an unmapped page.
func Int8(t *testing.T, pack lowbit.PackInt8Func) {
	blockFloats := int(unsafe.Sizeof(weights.Int8Block{})) / 4
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{5, 12, 16, 17, 33, 48} {
		for _, k := range []int{16, 32, 33, 48, 64, 100, 256} {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				groups := weights.Groups(k)
				mem, buf := guard.Alloc(n*groups*blockFloats, side)
				w := &weights.Int8{N: n, K: k, Blocks: unsafe.Slice((*weights.Int8Block)(unsafe.Pointer(&mem[0])), n*groups)}
				for i := range w.Blocks {
					b := &w.Blocks[i]
					b.Scale = float32(r.NormFloat64())
					for p := range b.Q {
						if i%groups*weights.GroupSize+p < k {
							b.Q[p] = int8(r.IntN(255) - 127)
						}
					}
				}
				CheckPackB(t, fmt.Sprintf("n=%d/k=%d/side=%d", n, k, side), lowbit.NewInt8Source(w, pack), n, k, w.At)
				w = nil
				buf.Free()
			}
		}
	}
}

// BF16 checks the widening packer pack of bfloat16 weights (through
// bf16compute's source of FloatWeights; nil: its Go path) against W.At
// bit for bit (CheckPackB's panels), on weights of every bit pattern
// (NaNs, infinities and subnormals widen exactly too), with W's data
// ending, and then starting, flush against an unmapped page.
func BF16(t *testing.T, pack func(chunks int, w *byte, stride int, odd int, dst *float32, nr int)) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{5, 12, 16, 17, 33, 48} {
		for _, k := range []int{16, 32, 33, 48, 64, 100, 256} {
			for _, side := range []guard.Side{guard.End, guard.Start} {
				stride := weights.Groups(k) * weights.GroupSize
				mem, buf := guard.Alloc(n*stride/2, side) // two bfloat16 a float32
				w := &weights.BF16{N: n, K: k, Data: unsafe.Slice((*uint16)(unsafe.Pointer(&mem[0])), n*stride)}
				for j := 0; j < n; j++ {
					for p := 0; p < k; p++ {
						w.Set(j, p, math.Float32frombits(uint32(r.Uint32N(1<<16))<<16))
					}
				}
				CheckPackB(t, fmt.Sprintf("n=%d/k=%d/side=%d", n, k, side), bf16compute.NewWeightsSource(w, pack), n, k, w.At)
				w = nil
				buf.Free()
			}
		}
	}
}

// CheckPackB checks src's panels of op(B) = Wᵀ for an n×k W against at
// (W's element (j, p)), bit for bit: dst[q*nr+j] = at(j0+j, pc+q) for
// j < w and 0 for w <= j < nr, with first k steps on either half of a
// group and off it, depths across the 16-step chunks and past several
// groups, column counts across the 4- and 16-column blocks (arm64's and
// amd64's gemm.GroupedCols), the panel widths of the GEMMs of both, and
// the first and last rows of W; a sentinel past the panel must survive.
func CheckPackB(t *testing.T, name string, src gemm.BSource, n, k int, at func(j, p int) float32) {
	t.Helper()
	for _, pc := range []int{0, 5, 16, 32, 48} {
		for _, kc := range []int{1, 15, 16, 17, 32, 33, 48, k - pc} {
			if kc < 1 || pc+kc > k {
				continue
			}
			for _, nr := range []int{4, 12, 16, 32, 48} {
				for _, cols := range []int{1, 3, 4, 5, 12, 15, 16, 17, 32, 33, 48} {
					if cols > nr || cols > n {
						continue
					}
					for _, j0 := range []int{0, n - cols} {
						name := fmt.Sprintf("%s/pc=%d/kc=%d/nr=%d/w=%d/j0=%d", name, pc, kc, nr, cols, j0)
						dst := make([]float32, kc*nr+16)
						for i := range dst {
							dst[i] = -7
						}
						src.PackB(dst[:kc*nr], pc, kc, j0, cols, nr)
						for q := 0; q < kc; q++ {
							for j := 0; j < nr; j++ {
								var want float32
								if j < cols {
									want = at(j0+j, pc+q)
								}
								if got := dst[q*nr+j]; math.Float32bits(got) != math.Float32bits(want) {
									t.Fatalf("%s: dst[%d*nr+%d] = %#x, want %#x", name, q, j, math.Float32bits(got), math.Float32bits(want))
								}
							}
						}
						for i := kc * nr; i < len(dst); i++ {
							if dst[i] != -7 {
								t.Fatalf("%s: dst[%d] written past the panel", name, i)
							}
						}
					}
				}
			}
		}
	}
}
