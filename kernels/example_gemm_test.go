package kernels_test

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/simdgpt/simdgpt/kernels"
)

func ExampleMatMul() {
	a := []float32{ // 2×3
		1, 2, 3,
		4, 5, 6,
	}
	b := []float32{ // 3×2
		7, 8,
		9, 10,
		11, 12,
	}
	c := make([]float32, 2*2)
	kernels.MatMul(2, 2, 3, a, b, c)
	fmt.Println(c)
	// Output: [58 64 139 154]
}

func ExampleGemm() {
	// C = 0.5·A·Bᵀ + C, with B stored as 2×3 (transB) and C a 2×2 window
	// of a 2×3 buffer (ldc = 3).
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 1, 0, 1, 0}
	c := []float32{
		10, 10, -1,
		20, 20, -1,
	}
	kernels.Gemm(false, true, 2, 2, 3, 0.5, a, 3, b, 3, 1, c, 3)
	fmt.Println(c)
	// Output: [12 11 -1 25 22.5 -1]
}

func ExampleGemmBiasGELU() {
	// The hidden layer of an MLP over two tokens of three features: x (2×3)
	// times the weights w (3×2), plus the bias, then GELU. pre keeps the
	// pre-activation for GELUBackward; out is the activation.
	x := []float32{
		1, 0, -1,
		0.5, 0.5, 0,
	}
	w := []float32{
		1, -1,
		0, 2,
		1, 0,
	}
	bias := []float32{1, 0}
	pre, out := make([]float32, 2*2), make([]float32, 2*2)
	kernels.GemmBiasGELU(false, false, 2, 2, 3, x, 3, w, 2, bias, pre, 2, out, 2)
	fmt.Println(pre)
	fmt.Printf("%.4f\n", out)
	// Output:
	// [1 -1 1.5 0.5]
	// [0.8412 -0.1588 1.3996 0.3457]
}

func ExampleGemmBias() {
	// A linear layer over two tokens: h (2×3) times the weights w (3×2),
	// plus the bias.
	h := []float32{
		1, 0, -1,
		0.5, 0.5, 0,
	}
	w := []float32{
		1, -1,
		0, 2,
		1, 0,
	}
	bias := []float32{1, 0}
	out := make([]float32, 2*2)
	kernels.GemmBias(false, false, 2, 2, 3, h, 3, w, 2, bias, out, 2)
	fmt.Println(out)
	// Output: [1 -1 1.5 0.5]
}

func ExampleMaskedScores() {
	// Three queries and three keys of size 2: query i sees keys 0..i.
	q := []float32{1, 0, 0, 1, 1, 1}
	k := []float32{1, 0, 0, 1, 1, 1}
	s := make([]float32, 3*3)
	kernels.MaskedScores(3, 3, 2, float32(1/math.Sqrt(2)), q, 2, k, 2, 0, s, 3)
	for i := 0; i < 3; i++ {
		fmt.Printf("%.3f\n", s[i*3:i*3+3])
	}
	// Output:
	// [0.707 -Inf -Inf]
	// [0.000 0.707 -Inf]
	// [0.707 0.707 1.414]
}

func ExampleImplementations() {
	// Every implementation this CPU can run computes the same result.
	x := []float32{1, 2, 3}
	for _, p := range kernels.Implementations() {
		fmt.Println(p.Dot(x, x) == 14)
		break // the set differs between machines; show one
	}
	// Output: true
}

// Each x86 implementation has GEMM micro-kernels of more than one tile
// shape; the one in use was chosen for this CPU. Its variants run the
// GEMM family on the others, for comparison.
func ExampleImpl_TileVariants() {
	p := kernels.Default()
	a := []float32{1, 2, 3, 4} // 2×2
	want := []float32{7, 10, 15, 22}
	agree := true
	for _, v := range p.TileVariants() { // none for generic
		c := make([]float32, 4)
		v.Gemm(false, false, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2)
		agree = agree && slices.Equal(c, want)
		if !strings.HasPrefix(v.Name(), p.Name()+"/") {
			agree = false
		}
	}
	fmt.Println("every tile gives", want, agree)
	// Output: every tile gives [7 10 15 22] true
}
