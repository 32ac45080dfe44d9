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
	c1 := float32(1 - math.Pow(float64(b1), float64(o.Step)))
	c2 := float32(1 - math.Pow(float64(b2), float64(o.Step)))
	wd := o.WeightDecay
	parallelFor(len(params), 8192, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := grads[i] * scale
			m := b1*o.M[i] + (1-b1)*g
			v := b2*o.V[i] + (1-b2)*g*g
			o.M[i], o.V[i] = m, v
			mh, vh := m/c1, v/c2
			upd := mh / (float32(math.Sqrt(float64(vh))) + o.Eps)
			if o.Decay == nil || o.Decay[i] {
				upd += wd * params[i]
			}
			params[i] -= lr * upd
		}
	})
	return norm
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
