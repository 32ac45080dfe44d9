// Package expf holds the constants of the vectorised float32 exponential
// that the softmax generators share (asm/gen/softmax for AVX2 and AVX-512,
// asm/gen/neon for arm64), so that every ISA computes exp with the same
// reduction and polynomial. The derivation and the error bounds are in the
// package comment of asm/gen/softmax.
package expf

import "math"

// Constants of the range reduction exp(t) = 2^k * exp(r), k = round(t*log2e),
// r = t - k*ln2 with ln2 split Cody-Waite fashion.
const (
	Log2E   = math.Log2E
	Ln2     = math.Ln2
	Ln2Hi   = 0.693359375    // 355/512: 9 significant bits, k*Ln2Hi is exact for |k| < 2^15
	Ln2Lo   = -2.12194440e-4 // Ln2 - Ln2Hi
	Shifter = 12582912       // 1.5*2^23: x + Shifter rounds x to an integer
)

// Limits of the softmax's reductions (see asm/gen/softmax).
const (
	ExpMin  = -87.3 // exp(t) is flushed to 0 below this
	NearMax = 4096  // rows with |max| below this use the near reduction
)

// Poly holds c0..c5, exp(r) ~ sum c_i r^i for |r| <= 0.3495, c0 = 1: a
// Remez fit of the relative error (max 4.5e-7).
var Poly = [...]float32{
	1,
	0.99999350945366694,
	0.49999354162980597,
	0.16688013148428285,
	0.041878810973860071,
	0.0069534790114648892,
}
