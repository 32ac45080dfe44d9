//go:build amd64 && !purego

package amd64

import "github.com/simdgpt/simdgpt/kernels/internal/xent"

// The cross-entropy kernels run the shared row loop (xent.Rows) on
// passes 1 and 2 of the softmax (softmaxExpRow*, asm/gen/softmax: the
// exponentials and their sum) and on the scale kernel (vecops) for the
// gradient.

func xentAVX2(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32) {
	xent.Rows(m, n, logits, ldl, targets, scale, dlogits, lddl, losses, expRowAVX2, scaleAVX2)
}

func xentAVX512(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32) {
	xent.Rows(m, n, logits, ldl, targets, scale, dlogits, lddl, losses, expRowAVX512, scaleAVX512)
}

func expRowAVX2(dst, src []float32) (float32, float64) {
	c, sum := softmaxExpRowAVX2(dst, src)
	return c, float64(sum)
}

func expRowAVX512(dst, src []float32) (float32, float64) {
	c, sum := softmaxExpRowAVX512(dst, src)
	return c, float64(sum)
}
