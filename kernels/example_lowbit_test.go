package kernels_test

import (
	"fmt"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

func ExampleGemvBF16() {
	// A projection stored as gpt stores it, k×n (2 inputs, 3 outputs):
	// out = in·W.
	w := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	wb := lowbit.BF16FromKN(w, 2, 3) // 3×2, a row an output
	y := make([]float32, 3)
	kernels.GemvBF16(1, wb, []float32{1, -1}, 0, y)
	fmt.Println(y)
	// Output:
	// [-3 -3 -3]
}

func ExampleGemmInt8() {
	// Two tokens through a 4-input, 2-output projection quantized to
	// int8: C = A·Wᵀ.
	w := []float32{ // 2×4, a row an output
		127, 0, -127, 63.5,
		1, 2, 3, 4,
	}
	wq, err := lowbit.Int8FromNK(w, 2, 4)
	if err != nil {
		panic(err)
	}
	a := []float32{ // 2×4
		1, 1, 1, 1,
		1, 0, 0, 0,
	}
	c := make([]float32, 4)
	kernels.GemmInt8(2, 1, a, 4, wq, 0, c, 2)
	// The activations are quantized to int16 too (scale 1/32767 here), so
	// the last digits depend on the implementation's order of sums.
	fmt.Printf("%.4f\n", c)
	fmt.Println(wq.At(0, 3), wq.At(1, 1)) // 63.5/1 rounds to 64 (even); 2/(4/127) to 64
	// Output:
	// [64.0000 10.0157 127.0000 1.0079]
	// 64 2.015748
}

func ExampleGemmDequantInt8() {
	// A prompt of three tokens through a 4-input, 2-output projection
	// quantized to int8: C = A·Wᵀ with W dequantized (float32 products),
	// as DequantizeInt8 followed by Gemm, without the dequantized copy.
	w := []float32{ // 2×4, a row an output
		127, 0, -127, 63.5,
		1, 2, 3, 4,
	}
	wq, err := lowbit.Int8FromNK(w, 2, 4)
	if err != nil {
		panic(err)
	}
	a := []float32{ // 3×4
		1, 1, 1, 1,
		1, 0, 0, 0,
		0, 0, 0, 2,
	}
	c := make([]float32, 6)
	kernels.GemmDequantInt8(3, 1, a, 4, wq, 0, c, 2)
	fmt.Printf("%.4f\n", c) // the last digits depend on the order of sums
	// Output:
	// [64.0000 10.0157 127.0000 1.0079 128.0000 8.0000]
}
