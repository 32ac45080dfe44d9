package kernels_test

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleSumSquares() {
	grads := []float32{3, -4, 12}
	fmt.Println(math.Sqrt(kernels.SumSquares(grads))) // the L2 norm
	// Output: 13
}

func ExampleAdamW() {
	params := []float32{1, -1, 0.5}
	grads := []float32{0.5, -2, 0}
	m := make([]float32, 3)
	v := make([]float32, 3)
	// Step t = 1 with gradient-norm clipping at 1: the norm is about 2.06.
	const b1, b2, t = 0.9, 0.999, 1
	clip := float32(math.Min(1, 1/math.Sqrt(kernels.SumSquares(grads))))
	kernels.AdamW(params, grads, m, v, kernels.AdamWParams{
		LR: 0.1, Beta1: b1, Beta2: b2, Eps: 1e-8, WeightDecay: 0.01,
		GradScale:    clip,
		InvBiasCorr1: float32(1 / (1 - math.Pow(b1, t))),
		InvBiasCorr2: float32(1 / (1 - math.Pow(b2, t))),
	})
	// The first step moves every parameter with a gradient by lr against
	// its sign, and shrinks each by lr*WeightDecay of itself.
	fmt.Printf("%.4f\n", params)
	// Output: [0.8990 -0.8990 0.4995]
}
