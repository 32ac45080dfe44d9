package attention_test

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/kernels"
)

// Queries and keys of zero attend uniformly to the past: position i
// averages the values of positions 0..i.
func ExampleLayer_Forward() {
	const c, t = 4, 3
	l, err := attention.NewMultiHead(c, 2) // two heads of size 2
	if err != nil {
		panic(err)
	}
	qkv := make([]float32, t*3*c) // [T,3C]: Q, K, V side by side
	for i := 0; i < t; i++ {
		v := qkv[i*3*c+2*c : (i+1)*3*c]
		for j := range v {
			v[j] = float32(i + 1) // V = (i+1, ...) at position i
		}
	}
	y := make([]float32, t*c)
	l.Forward(y, qkv, 1, t)

	probs := l.Probs() // [B,H,T,T]
	for i := 0; i < t; i++ {
		fmt.Printf("head 0, position %d attends %.3f\n", i, probs[i*t:(i+1)*t])
	}
	fmt.Println("y at position 2:", y[2*c:3*c])
	// Output:
	// head 0, position 0 attends [1.000 0.000 0.000]
	// head 0, position 1 attends [0.500 0.500 0.000]
	// head 0, position 2 attends [0.333 0.333 0.333]
	// y at position 2: [2 2 2 2]
}

// Backward writes dL/dqkv from dL/dy and the qkv Forward read.
func ExampleLayer_Backward() {
	const c, t = 2, 2
	l := attention.NewSingleHead(c)
	qkv := []float32{
		0, 0, 0, 0, 1, 2, // position 0: Q, K, V
		0, 0, 0, 0, 3, 4, // position 1
	}
	y := make([]float32, t*c)
	l.Forward(y, qkv, 1, t)

	// L = sum(y): with equal scores position 1 averages V, so dL/dV is
	// 1 + 1/2 for position 0 and 1/2 for position 1.
	dy := []float32{1, 1, 1, 1}
	dqkv := make([]float32, t*3*c)
	l.Backward(dqkv, dy, qkv)
	fmt.Println("dL/dV:", dqkv[2*c:3*c], dqkv[3*c+2*c:])
	// Output:
	// dL/dV: [1.5 1.5] [0.5 0.5]
}

// Sampling decodes one token at a time: each call sees the cached keys
// and values of the earlier positions and appends its own.
func ExampleDecoder_Decode() {
	const c, maxT = 4, 8
	l := attention.NewSingleHead(c)
	d := l.NewDecoder(maxT) // one per layer and sequence
	y := make([]float32, c)
	for _, v := range [][]float32{{2, 0, 0, 0}, {0, 2, 0, 0}} {
		qkv := make([]float32, 3*c) // Q = K = 0: equal scores
		copy(qkv[2*c:], v)
		d.Decode(y, qkv, 1)
		fmt.Println("position", d.Len()-1, "->", y)
	}
	// Output:
	// position 0 -> [2 0 0 0]
	// position 1 -> [1 1 0 0]
}

// A bfloat16 cache holds each key and value rounded to 8 significant
// bits, in half the memory of a float32 one (for heads of a multiple of
// 32 channels; others pad each key to one).
func ExampleLayer_NewDecoderKV() {
	const c, maxT = 64, 1024
	l := attention.NewSingleHead(c)
	d := l.NewDecoderKV(maxT, attention.KVBF16)
	fmt.Println(d.KVCache(), attention.CacheBytes(attention.KVBF16, maxT, c, 1), "bytes, not", attention.CacheBytes(attention.KVFloat32, maxT, c, 1))
	y := make([]float32, c)
	qkv := make([]float32, 3*c)
	copy(qkv[2*c:], []float32{1.001, 2, 3, 4}) // 1.001 is 1 in bfloat16
	d.Decode(y, qkv, 1)
	fmt.Println(y[:4])
	// Output:
	// bf16 262144 bytes, not 524288
	// [1 2 3 4]
}

// qkvOf returns t rows of queries, keys and values of width c, of a
// pattern that gives the heads unequal scores.
func qkvOf(t, c int) []float32 {
	qkv := make([]float32, t*3*c)
	for i := range qkv {
		qkv[i] = float32(i%7)/7 - float32(i%3)/5
	}
	return qkv
}

// Fused.Forward gives Layer.Forward's output without the T×T
// probabilities, for long contexts at inference time.
func ExampleFused_Forward() {
	const c, t = 8, 1024
	l, _ := attention.NewMultiHead(c, 2)
	qkv := qkvOf(t, c)
	full := make([]float32, t*c)
	fused := make([]float32, t*c)
	l.Forward(full, qkv, 1, t)
	l.NewFused().Forward(fused, qkv, 1, t)
	worst := 0.0
	for i := range full {
		worst = math.Max(worst, math.Abs(float64(full[i]-fused[i])))
	}
	fmt.Println("largest difference below 1e-5:", worst < 1e-5)
	// Output:
	// largest difference below 1e-5: true
}

// A layer computes with the kernel implementation it is given (by
// default kernels.Default()); every implementation this CPU runs gives
// the same output up to float32 rounding.
func ExampleWithImpl() {
	const c, t = 8, 5
	qkv := qkvOf(t, c)
	var first []float32
	agree := true
	for _, impl := range kernels.Implementations() {
		l, err := attention.NewMultiHead(c, 2, attention.WithImpl(impl))
		if err != nil {
			panic(err)
		}
		y := make([]float32, t*c)
		l.Forward(y, qkv, 1, t)
		if first == nil {
			first = y
		}
		for i := range y {
			agree = agree && math.Abs(float64(y[i]-first[i])) < 1e-5
		}
	}
	fmt.Println("implementations agree:", agree)
	// Output:
	// implementations agree: true
}

// ForwardFlops counts only the work the causal mask leaves; a forward
// plus backward pass costs three times a forward.
func ExampleForwardFlops() {
	const b, t, c = 12, 64, 128
	fwd := attention.ForwardFlops(b, t, c)
	fmt.Printf("forward %.0f flops, forward+backward %.0f\n", fwd, fwd+attention.BackwardFlops(b, t, c))
	// Output: forward 12779520 flops, forward+backward 38338560
}
