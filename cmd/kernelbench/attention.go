package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// attnShape is one attention case: a mode and the layer's sizes.
type attnShape struct {
	mode       string // "fwd", "fwdbwd" or "fused"
	b, t, c, h int
}

// name is the shape's name in flags and tables: "fwd,B=12,T=64,C=128,H=4".
func (a attnShape) name() string {
	return fmt.Sprintf("%s,B=%d,T=%d,C=%d,H=%d", a.mode, a.b, a.t, a.c, a.h)
}

// flops is the work of one call, attention's causal count.
func (a attnShape) flops() float64 {
	f := attention.ForwardFlops(a.b, a.t, a.c)
	if a.mode == "fwdbwd" {
		f += attention.BackwardFlops(a.b, a.t, a.c)
	}
	return f
}

// memory estimates on the high side the bytes of one case of a
// (bench.KernelDef.Memory): qkv [B,T,3C] and y [B,T,C] (fwdbwd: also dy
// and dqkv), and the layer's buffers as package attention grows them:
// the B·H·T² probabilities (fused: instead a block of scores per worker,
// under 2^15 floats); for the backward pass a T² scratch per worker; and
// 2 MiB per worker for the products' packing buffers and the workers'
// stacks.
func (a attnShape) memory() float64 {
	n := float64(a.b) * float64(a.t) * float64(a.c)
	tt := float64(a.t) * float64(a.t)
	workers := float64(max(runtime.NumCPU(), runtime.GOMAXPROCS(0)))
	floats := 4 * n
	switch a.mode {
	case "fused":
		floats += (1 << 15) * workers
	case "fwdbwd":
		floats += float64(a.b)*float64(a.h)*tt + 4*n + tt*workers
	default:
		floats += float64(a.b) * float64(a.h) * tt
	}
	return 4*floats + (2<<20)*workers
}

// attnShapes are the attention layer's benchmark shapes (those of
// attention's own benchmarks): forward, and forward followed by
// backward, on two training shapes; the fused inference forward on one
// sequence of 1024 to 4096 positions.
func attnShapes() []attnShape {
	var out []attnShape
	for _, mode := range []string{"fwd", "fwdbwd"} {
		out = append(out, attnShape{mode, 12, 64, 128, 4}, attnShape{mode, 8, 256, 384, 6})
	}
	for _, t := range []int{1024, 2048, 4096} {
		out = append(out, attnShape{"fused", 1, t, 384, 6})
	}
	return out
}

// attentionKernel is the multi-head attention layer of package attention
// as a kernelbench kernel. Its shapes are named "MODE,B=..,T=..,C=..,H=.."
// and carry B, T and C in M, N and K (T is the chart's size axis).
//
// A case's layer computes with im.Own (attention.WithImpl); it also runs
// with im.Own as the kernels' default around every call (kernels.SetDefault:
// a lookup among a handful of names and an atomic store, nothing next to
// the milliseconds a call takes), restoring the previous default after it.
// Peers do not run attention.
func attentionKernel() *bench.Kernel {
	shapes := attnShapes()
	byName := map[string]attnShape{}
	var bs []bench.Shape
	for _, a := range shapes {
		byName[a.name()] = a
		bs = append(bs, bench.Shape{Name: a.name(), M: a.b, N: a.t, K: a.c})
	}
	return bench.NewKernel(bench.KernelDef{
		Name: "attention",
		Doc: "causal self-attention heads of package attention, qkv [B,T,3C] to y [B,T,C], H heads; " +
			"fwd: Forward, fwdbwd: Forward+Backward, fused: Fused.Forward",
		Bound:  bench.ComputeBound,
		Shapes: bs,
		Short:  shapes[0].name(),
		Work: func(s bench.Shape) bench.Work {
			a := byName[s.Name]
			B, T, C := float64(a.b), float64(a.t), float64(a.c)
			// qkv and y; fwdbwd also reads dy and writes dqkv. The T×T
			// probabilities are not counted.
			bytes := 4 * (4 * B * T * C)
			if a.mode == "fwdbwd" {
				bytes *= 2
			}
			return bench.Work{Flops: a.flops(), Bytes: bytes}
		},
		Memory: func(s bench.Shape) float64 { return byName[s.Name].memory() },
		Has:    func(im *bench.Impl) bool { return im.Own != nil },
		Setup: func(s bench.Shape, im *bench.Impl) func() {
			a := byName[s.Name]
			return withImpl(im.Own, newAttnCase(a, im.Own))
		},
	})
}

// withImpl returns a function that calls f with p as the kernels'
// default implementation and then restores the previous default.
func withImpl(p *kernels.Impl, f func()) func() {
	name := p.Name()
	return func() {
		prev := kernels.Default()
		if err := kernels.SetDefault(name); err != nil {
			panic(err) // p came from kernels.Implementations
		}
		defer kernels.SetDefault(prev.Name())
		f()
	}
}

// newAttnCase allocates a layer computing with impl and its inputs for a
// and returns one call of the mode's work.
func newAttnCase(a attnShape, impl *kernels.Impl) func() {
	l, err := attention.NewMultiHead(a.c, a.h, attention.WithImpl(impl))
	if err != nil {
		panic(err) // the shapes above have C divisible by H
	}
	r := rand.New(rand.NewPCG(uint64(a.t), 3))
	uniform := func(n int, scale float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = scale * (2*r.Float32() - 1)
		}
		return s
	}
	n := a.b * a.t * a.c
	// Queries and keys uniform in ±√3 give scaled scores of standard
	// deviation 1 for any head size, so the softmax is neither uniform
	// nor one-hot.
	qkv, y := uniform(3*n, float32(math.Sqrt(3))), make([]float32, n)
	switch a.mode {
	case "fused":
		f := l.NewFused()
		return func() { f.Forward(y, qkv, a.b, a.t) }
	case "fwdbwd":
		dy, dqkv := uniform(n, 0.01), make([]float32, 3*n)
		return func() {
			l.Forward(y, qkv, a.b, a.t)
			l.Backward(dqkv, dy, qkv)
		}
	}
	return func() { l.Forward(y, qkv, a.b, a.t) }
}
