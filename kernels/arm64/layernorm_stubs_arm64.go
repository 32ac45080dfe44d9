//go:build arm64 && !purego

package arm64

// layerNormRowNEON normalises the row x (len(x) >= 1) into y =
// (x-mean)*rstd*gamma + beta and returns mean and rstd =
// 1/sqrt(variance+eps); y, gamma and beta must be at least as long as x,
// and y may be x. Requires ASIMD. Arguments are not checked.
//
//go:noescape
func layerNormRowNEON(y, x, gamma, beta []float32, eps float32) (mean, rstd float32)

// layerNormBackwardRowNEON accumulates the LayerNorm gradients of the row
// x (len(x) >= 1) into dx, dgamma and dbeta (see
// generic.LayerNormBackwardRow); every other slice must be at least as
// long as x. Requires ASIMD. Arguments are not checked.
//
//go:noescape
func layerNormBackwardRowNEON(dx, dy, x, gamma, dgamma, dbeta []float32, mean, rstd float32)
