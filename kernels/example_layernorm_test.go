package kernels_test

import (
	"fmt"

	"github.com/simdgpt/simdgpt/kernels"
)

// LayerNorm of two rows of four, saving the statistics, then the
// gradients for an upstream gradient of ones: the input gradient of a
// normalisation is 0 when dy is constant (a shift of the output does not
// depend on x), and dbeta counts the rows.
func ExampleLayerNorm() {
	x := []float32{1, 2, 3, 4, 10, 10, 10, 14}
	gamma := []float32{1, 1, 1, 1}
	beta := []float32{0, 0, 0, 0.5}
	y := make([]float32, 8)
	mean, rstd := make([]float32, 2), make([]float32, 2)
	kernels.LayerNorm(2, 4, x, 4, gamma, beta, 0, y, 4, mean, rstd)
	fmt.Printf("y = %.3f\nmean = %v, rstd = %.4f\n", y, mean, rstd)

	dy := []float32{1, 1, 1, 1, 1, 1, 1, 1}
	dx, dgamma, dbeta := make([]float32, 8), make([]float32, 4), make([]float32, 4)
	kernels.LayerNormBackward(2, 4, dy, 4, x, 4, mean, rstd, gamma, dx, 4, dgamma, dbeta)
	fmt.Printf("|dx| < 1e-6: %v, dbeta = %v\n", maxAbs(dx) < 1e-6, dbeta)
	// Output:
	// y = [-1.342 -0.447 0.447 1.842 -0.577 -0.577 -0.577 2.232]
	// mean = [2.5 11], rstd = [0.8944 0.5774]
	// |dx| < 1e-6: true, dbeta = [2 2 2 2]
}

func maxAbs(s []float32) float32 {
	var m float32
	for _, v := range s {
		m = max(m, v, -v)
	}
	return m
}

// The residual connection of a transformer block and the next LayerNorm
// in one pass: sum = x + r (kept for the backward pass), y = LayerNorm(sum).
func ExampleAddLayerNorm() {
	x := []float32{1, 2, 3, 4}
	r := []float32{0, 0, 0, 4}
	gamma := []float32{1, 1, 1, 1}
	beta := []float32{0, 0, 0, 0}
	sum, y := make([]float32, 4), make([]float32, 4)
	mean, rstd := make([]float32, 1), make([]float32, 1)
	kernels.AddLayerNorm(1, 4, x, 4, r, 4, sum, 4, gamma, beta, 0, y, 4, mean, rstd)
	fmt.Printf("sum = %v\ny = %.3f\nmean = %v\n", sum, y, mean)
	// Output:
	// sum = [1 2 3 8]
	// y = [-0.928 -0.557 -0.186 1.671]
	// mean = [3.5]
}
