package gpt

import (
	"fmt"
	"math"
)

// AdamW is Adam with decoupled weight decay and global gradient-norm
// clipping over one flat parameter vector. M and V (the first and second
// moment estimates) and Step are its whole state, saved in checkpoints.
type AdamW struct {
	Beta1, Beta2, Eps float32
	WeightDecay       float32
	// ClipNorm scales the gradient down to this global L2 norm when it is
	// larger (0: no clipping).
	ClipNorm float32
	// Decay[i] tells whether parameter i is weight-decayed (matrices are;
	// biases and LayerNorm parameters are not); nil decays all.
	Decay []bool
	M, V  []float32
	Step  int

	partial []float64 // per-chunk sums of squares
}

// NewAdamW returns an optimizer for n parameters with the usual GPT
// settings: betas 0.9 and 0.95, eps 1e-8, weight decay 0.1, clipping at 1.
func NewAdamW(n int, decay []bool) *AdamW {
	if decay != nil && len(decay) != n {
		panic(fmt.Sprintf("gpt.NewAdamW: len(decay) = %d, want n = %d", len(decay), n))
	}
	return &AdamW{Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1,
		Decay: decay, M: make([]float32, n), V: make([]float32, n)}
}

// normChunk is the fixed chunk of the gradient-norm reduction: the chunk
// sums are added in order, so the norm does not depend on the thread count.
const normChunk = 1 << 14

// GradNorm returns the L2 norm of g (deterministic for any GOMAXPROCS).
func (o *AdamW) GradNorm(g []float32) float64 {
	nc := (len(g) + normChunk - 1) / normChunk
	if cap(o.partial) < nc {
		o.partial = make([]float64, nc)
	}
	part := o.partial[:nc]
	parallelFor(nc, 4, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			var s float64
			for _, v := range g[c*normChunk : min((c+1)*normChunk, len(g))] {
				s += float64(v) * float64(v)
			}
			part[c] = s
		}
	})
	var s float64
	for _, v := range part {
		s += v
	}
	return math.Sqrt(s)
}

// Update applies one AdamW step with learning rate lr to params from grads
// (clipped first) and returns the gradient norm before clipping.
func (o *AdamW) Update(params, grads []float32, lr float32) float64 {
	if len(params) != len(o.M) || len(grads) != len(o.M) {
		panic(fmt.Sprintf("gpt.AdamW.Update: len(params)=%d len(grads)=%d, optimizer has %d", len(params), len(grads), len(o.M)))
	}
	norm := o.GradNorm(grads)
	scale := float32(1)
	if o.ClipNorm > 0 && norm > float64(o.ClipNorm) {
		scale = float32(float64(o.ClipNorm) / norm)
	}
	o.Step++
	b1, b2 := o.Beta1, o.Beta2
	ic1 := float32(1 / (1 - math.Pow(float64(b1), float64(o.Step))))
	ic2 := float32(1 / (1 - math.Pow(float64(b2), float64(o.Step))))
	parallelFor(len(params), 8192, func(lo, hi int) {
		var decay []bool
		if o.Decay != nil {
			decay = o.Decay[lo:hi]
		}
		adamSpan(params[lo:hi], grads[lo:hi], o.M[lo:hi], o.V[lo:hi], decay,
			scale, b1, b2, ic1, ic2, o.Eps, o.WeightDecay, lr)
	})
	return norm
}

// adamSpan applies the AdamW update to one span; ic1 and ic2 are the
// inverse bias corrections 1/(1-β^t); decay nil decays every parameter.
func adamSpan(p, g, m, v []float32, decay []bool, scale, b1, b2, ic1, ic2, eps, wd, lr float32) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	if decay != nil {
		decay = decay[:len(p)]
	}
	for i := range p {
		gi := g[i] * scale
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		upd := mi * ic1 / (float32(math.Sqrt(float64(vi*ic2))) + eps)
		if decay == nil || decay[i] {
			upd += wd * p[i]
		}
		p[i] -= lr * upd
	}
}

// LRSchedule is linear warm-up from 0 to Max over Warmup steps, then cosine
// decay to Min at step Total (and Min after it).
type LRSchedule struct {
	Max, Min      float32
	Warmup, Total int
}

// At returns the learning rate of step (0-based).
func (s LRSchedule) At(step int) float32 {
	if step < s.Warmup {
		return s.Max * float32(step+1) / float32(s.Warmup)
	}
	if step >= s.Total || s.Total <= s.Warmup {
		return s.Min
	}
	frac := float64(step-s.Warmup) / float64(s.Total-s.Warmup)
	return s.Min + float32(0.5*(1+math.Cos(math.Pi*frac)))*(s.Max-s.Min)
}
