package kernels_test

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleGELU() {
	x := []float32{-3, -1, 0, 1, 3, float32(math.Inf(-1)), float32(math.Inf(1))}
	y := make([]float32, len(x))
	kernels.GELU(y, x)
	fmt.Printf("%.4f\n", y)
	// Output: [-0.0036 -0.1588 0.0000 0.8412 2.9964 -0.0000 +Inf]
}

func ExampleGELUBackward() {
	// The gradient of L = sum(gelu(x)): dy = 1, so dx = gelu'(x).
	x := []float32{-1, 0, 1, 30}
	dy := []float32{1, 1, 1, 1}
	kernels.GELUBackward(dy, dy, x) // in place: dx is dy
	fmt.Printf("%.4f\n", dy)
	// Output: [-0.0830 0.5000 1.0830 1.0000]
}

func ExampleBiasGELU() {
	// The hidden layer of an MLP: two rows of three pre-activations (from
	// the GEMM before it), stored with a leading dimension of 4; BiasGELU
	// adds the bias into x, which keeps the pre-activation for
	// GELUBackward, and writes the activation into y.
	x := []float32{
		-1, 0, 1, 99, // the 99 is padding, not part of the matrix
		0, 0, 0,
	}
	bias := []float32{0.5, 1, -0.5}
	y := make([]float32, 6)
	kernels.BiasGELU(2, 3, x, 4, bias, y, 3)
	fmt.Println(x)
	fmt.Printf("%.4f\n", y)
	// Output:
	// [-0.5 1 0.5 99 0.5 1 -0.5]
	// [-0.1543 0.8412 0.3457 0.3457 0.8412 -0.1543]
}
