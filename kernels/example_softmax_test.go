package kernels_test

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleSoftmax() {
	// Two rows of three scores, the second causally masked after its
	// first entry, stored with a leading dimension of 4.
	inf := float32(math.Inf(-1))
	x := []float32{
		1, 2, 3, 99, // the 99 is padding, not part of the matrix
		0.5, inf, inf,
	}
	y := make([]float32, 7)
	kernels.Softmax(2, 3, x, 4, y, 4)
	fmt.Printf("%.4f\n", y[0:3])
	fmt.Printf("%.4f\n", y[4:7])
	// Output:
	// [0.0900 0.2447 0.6652]
	// [1.0000 0.0000 0.0000]
}

func ExampleSoftmaxBackward() {
	// The gradient through one softmax row y for the loss L = y[0]:
	// dy = (1, 0), so dx = y*(dy - y[0]).
	y := []float32{0.25, 0.75}
	dy := []float32{1, 0}
	dx := make([]float32, 2)
	kernels.SoftmaxBackward(1, 2, y, 2, dy, 2, dx, 2)
	fmt.Println(dx)
	// Output: [0.1875 -0.1875]
}
