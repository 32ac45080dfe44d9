//go:build arm64 && !purego

package arm64

import (
	"math"

	"github.com/simdgpt/simdgpt/kernels/internal/xent"
)

// xentNEON runs the shared cross-entropy row loop (xent.Rows) on the
// softmax's passes (maxNEON, then expShiftedNEON: the exponentials and
// their sum) and on scaleNEON for the gradient.
func xentNEON(m, n int, logits []float32, ldl int, targets []int32, scale float32, dlogits []float32, lddl int, losses []float32) {
	xent.Rows(m, n, logits, ldl, targets, scale, dlogits, lddl, losses, expRowXentNEON, scaleNEON)
}

// expRowXentNEON is an xent.ExpRow: a row whose maximum is NaN or +Inf
// returns a NaN sum, a row of only -Inf a sum of 0, without touching dst.
func expRowXentNEON(dst, src []float32) (float32, float64) {
	mx := maxNEON(src)
	switch {
	case mx != mx || math.IsInf(float64(mx), 1):
		return 0, math.NaN()
	case math.IsInf(float64(mx), -1):
		return 0, 0
	}
	return expShiftedNEON(dst, src, mx)
}
