package gpt

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/kernels"
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
	// Decay lists the parameters that are weight-decayed (matrices are;
	// biases and LayerNorm parameters are not, see Config.DecaySpans):
	// spans in increasing order of Offset, disjoint, within the
	// parameters. nil decays all; an empty, non-nil list none.
	Decay []Span
	M, V  []float32
	Step  int
	// Kernels is the implementation the update runs on; nil is
	// kernels.Default(). A Trainer sets it to its model's.
	Kernels *kernels.Impl

	partial []float64  // per-chunk sums of squares
	spans   []adamSpan // the update's parts: chunks cut where Decay changes
}

// Span is the run of parameters Params[Offset : Offset+Len].
type Span struct{ Offset, Len int }

// adamSpan is a run of parameters that are all decayed or all not.
type adamSpan struct {
	lo, hi int
	decay  bool
}

// checkSpans panics, naming fn, unless spans are in increasing order of
// Offset, disjoint, of positive length and within [0, n).
func checkSpans(fn string, spans []Span, n int) {
	end := 0
	for i, sp := range spans {
		switch {
		case sp.Len < 1:
			panic(fmt.Sprintf("gpt.%s: decay[%d] = %+v has length %d, must be >= 1", fn, i, sp, sp.Len))
		case sp.Offset < end:
			panic(fmt.Sprintf("gpt.%s: decay[%d] = %+v starts at %d, before the end %d of the span before it (spans must be disjoint, in increasing order, from 0)", fn, i, sp, sp.Offset, end))
		case sp.Offset > n || sp.Len > n-sp.Offset:
			panic(fmt.Sprintf("gpt.%s: decay[%d] = %+v ends beyond the %d parameters", fn, i, sp, n))
		}
		end = sp.Offset + sp.Len
	}
}

// adamChunk is the most parameters one part of the update takes.
const adamChunk = 8192

// updateSpans returns the parts of the update: chunks of at most adamChunk
// parameters, cut wherever Decay starts or ends, computed once. It panics
// if Decay is not a valid list of spans (see checkSpans).
func (o *AdamW) updateSpans() []adamSpan {
	if o.spans != nil {
		return o.spans
	}
	n := len(o.M)
	chunks := func(lo, hi int, decay bool) {
		for ; lo < hi; lo += adamChunk {
			o.spans = append(o.spans, adamSpan{lo, min(lo+adamChunk, hi), decay})
		}
	}
	if o.Decay == nil {
		chunks(0, n, true)
		return o.spans
	}
	checkSpans("AdamW.Update", o.Decay, n)
	pos := 0
	for _, sp := range o.Decay {
		chunks(pos, sp.Offset, false)
		chunks(sp.Offset, sp.Offset+sp.Len, true)
		pos = sp.Offset + sp.Len
	}
	chunks(pos, n, false)
	return o.spans
}

func (o *AdamW) kernels() *kernels.Impl {
	if o.Kernels != nil {
		return o.Kernels
	}
	return kernels.Default()
}

// NewAdamW returns an optimizer for n parameters with the usual GPT
// settings: betas 0.9 and 0.95, eps 1e-8, weight decay 0.1, clipping at 1.
func NewAdamW(n int, decay []Span) *AdamW {
	if n < 0 {
		panic(fmt.Sprintf("gpt.NewAdamW: n = %d, must be >= 0", n))
	}
	checkSpans("NewAdamW", decay, n)
	return newAdamW(decay, make([]float32, n), make([]float32, n))
}

// newAdamW is NewAdamW with the moments m and v given (of the length
// decay's spans lie within).
func newAdamW(decay []Span, m, v []float32) *AdamW {
	return &AdamW{Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1, ClipNorm: 1, Decay: decay, M: m, V: v}
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
	k := o.kernels()
	parallelFor(nc, 4, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			part[c] = k.SumSquares(g[c*normChunk : min((c+1)*normChunk, len(g))])
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
	h := kernels.AdamWParams{LR: lr, Beta1: b1, Beta2: b2, Eps: o.Eps, WeightDecay: o.WeightDecay,
		GradScale: scale, InvBiasCorr1: ic1, InvBiasCorr2: ic2}
	k, spans := o.kernels(), o.updateSpans()
	parallelFor(len(spans), 1, func(lo, hi int) {
		for _, sp := range spans[lo:hi] {
			hs := h
			if !sp.decay {
				hs.WeightDecay = 0
			}
			k.AdamW(params[sp.lo:sp.hi], grads[sp.lo:sp.hi], o.M[sp.lo:sp.hi], o.V[sp.lo:sp.hi], hs)
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
