package kernels_test

import (
	"fmt"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleGemv() {
	a := []float32{ // 2×3
		1, 2, 3,
		4, 5, 6,
	}
	// y = A·x
	y := make([]float32, 2)
	kernels.Gemv(false, 2, 3, 1, a, 3, []float32{1, 0, -1}, 0, y)
	fmt.Println(y)
	// z = 2·Aᵀ·v + z
	z := []float32{1, 1, 1}
	kernels.Gemv(true, 2, 3, 2, a, 3, []float32{1, 1}, 1, z)
	fmt.Println(z)
	// Output:
	// [-2 -2]
	// [11 15 19]
}
