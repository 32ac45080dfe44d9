package attention_test

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/kernels"
)

// A layer with zero weights attends uniformly to the past: position i
// averages the values of positions 0..i, which here are the value bias.
func ExampleLayer_Forward() {
	const c, t = 4, 3
	l, err := attention.NewMultiHead(c, 2) // two heads of size 2
	if err != nil {
		panic(err)
	}
	buf := make([]float32, attention.NumParams(c))
	p := attention.ViewParams(c, buf)
	copy(p.BQKV[2*c:], []float32{1, 2, 3, 4}) // V = (1, 2, 3, 4) at every position
	for i := 0; i < c; i++ {
		p.WProj[i*c+i] = 1 // identity projection
	}
	x := make([]float32, t*c)
	out := make([]float32, t*c)
	l.Forward(out, x, 1, t, p)

	probs := l.Probs() // [B,H,T,T]
	for i := 0; i < t; i++ {
		fmt.Printf("head 0, position %d attends %.3f\n", i, probs[i*t:(i+1)*t])
	}
	fmt.Println("out at position 2:", out[2*c:3*c])
	// Output:
	// head 0, position 0 attends [1.000 0.000 0.000]
	// head 0, position 1 attends [0.500 0.500 0.000]
	// head 0, position 2 attends [0.333 0.333 0.333]
	// out at position 2: [1 2 3 4]
}

// Backward writes dL/dx and adds the parameter gradients into g.
func ExampleLayer_Backward() {
	const c, t = 2, 2
	l := attention.NewSingleHead(c)
	p := attention.ViewParams(c, make([]float32, attention.NumParams(c)))
	for i := 0; i < c; i++ {
		p.WProj[i*c+i] = 1
	}
	x := []float32{1, 2, 3, 4}
	out := make([]float32, t*c)
	l.Forward(out, x, 1, t, p)

	// L = sum(out): dL/dout is all ones; BProj's gradient counts the
	// positions, whatever the rest of the layer does.
	dout := []float32{1, 1, 1, 1}
	dx := make([]float32, t*c)
	g := attention.ViewParams(c, make([]float32, attention.NumParams(c)))
	l.Backward(dx, dout, p, g)
	fmt.Println("dL/dBProj:", g.BProj)
	// Output:
	// dL/dBProj: [2 2]
}

// A flat buffer holds one layer's parameters; ViewParams cuts it up.
func ExampleViewParams() {
	const c = 8
	buf := make([]float32, attention.NumParams(c))
	p := attention.ViewParams(c, buf)
	fmt.Println(len(buf), len(p.WQKV), len(p.BQKV), len(p.WProj), len(p.BProj))
	// Output:
	// 288 192 24 64 8
}

// Sampling decodes one token at a time: each call sees the cached keys
// and values of the earlier positions and appends its own.
func ExampleDecoder_Decode() {
	const c, maxT = 4, 8
	l := attention.NewSingleHead(c)
	p := attention.ViewParams(c, make([]float32, attention.NumParams(c)))
	for i := 0; i < c; i++ {
		p.WQKV[i*3*c+2*c+i] = 1 // V = x
		p.WProj[i*c+i] = 1      // out = the attention-weighted V
	}
	d := l.NewDecoder(maxT) // one per layer and sequence
	out := make([]float32, c)
	for _, tok := range [][]float32{{2, 0, 0, 0}, {0, 2, 0, 0}} {
		d.Decode(out, tok, 1, p)
		fmt.Println("position", d.Len()-1, "->", out)
	}
	// Output:
	// position 0 -> [2 0 0 0]
	// position 1 -> [1 1 0 0]
}

// Fused.Forward gives Layer.Forward's output without the T×T
// probabilities, for long contexts at inference time.
func ExampleFused_Forward() {
	const c, t = 8, 1024
	l, _ := attention.NewMultiHead(c, 2)
	p := attention.ViewParams(c, make([]float32, attention.NumParams(c)))
	for i := range p.WQKV {
		p.WQKV[i] = float32(i%7) / 20
	}
	for i := 0; i < c; i++ {
		p.WProj[i*c+i] = 1
	}
	x := make([]float32, t*c)
	for i := range x {
		x[i] = float32(i%5) / 5
	}
	full := make([]float32, t*c)
	fused := make([]float32, t*c)
	l.Forward(full, x, 1, t, p)
	l.NewFused().Forward(fused, x, 1, t, p)
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
	p := attention.ViewParams(c, make([]float32, attention.NumParams(c)))
	for i := range p.WQKV {
		p.WQKV[i] = float32(i%5) / 10
	}
	for i := 0; i < c; i++ {
		p.WProj[i*c+i] = 1
	}
	x := make([]float32, t*c)
	for i := range x {
		x[i] = float32(i%3) / 3
	}
	var first []float32
	agree := true
	for _, impl := range kernels.Implementations() {
		l, err := attention.NewMultiHead(c, 2, attention.WithImpl(impl))
		if err != nil {
			panic(err)
		}
		out := make([]float32, t*c)
		l.Forward(out, x, 1, t, p)
		if first == nil {
			first = out
		}
		for i := range out {
			agree = agree && math.Abs(float64(out[i]-first[i])) < 1e-5
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
	// Output: forward 113442816 flops, forward+backward 340328448
}
