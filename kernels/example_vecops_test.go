package kernels_test

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleDot() {
	x := []float32{1, 2, 3, 4}
	y := []float32{5, 6, 7, 8}
	fmt.Println(kernels.Dot(x, y))
	// Output: 70
}

func ExampleAxpy() {
	x := []float32{1, 2, 3}
	y := []float32{10, 20, 30}
	kernels.Axpy(2, x, y) // y += 2*x
	fmt.Println(y)
	// Output: [12 24 36]
}

func ExampleScale() {
	x := []float32{1, -2, 0.5}
	kernels.Scale(4, x)
	fmt.Println(x)
	// Output: [4 -8 2]
}

func ExampleAdd() {
	x := []float32{1, 2, 3}
	y := []float32{0.5, 0.25, 0.125}
	dst := make([]float32, 3)
	kernels.Add(dst, x, y)
	fmt.Println(dst)
	kernels.Add(x, x, y) // dst may be x or y
	fmt.Println(x)
	// Output:
	// [1.5 2.25 3.125]
	// [1.5 2.25 3.125]
}

func ExampleSum() {
	fmt.Println(kernels.Sum([]float32{1, 2, 3, 4, 5}))
	fmt.Println(kernels.Sum(nil))
	// Output:
	// 15
	// 0
}

func ExampleMax() {
	fmt.Println(kernels.Max([]float32{-3, 7, 2}))
	fmt.Println(kernels.Max(nil))
	fmt.Println(kernels.Max([]float32{1, float32(math.NaN()), 2}))
	// Output:
	// 7
	// -Inf
	// NaN
}
