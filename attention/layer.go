package attention

import (
	"fmt"
	"math"

	"github.com/simdgpt/simdgpt/internal/parallel"
)

// Layer is one causal self-attention layer of width C with H heads, for
// training: Forward, then Backward of the same call, and Probs. It owns
// the probabilities Backward needs and a workspace that grow on first use
// and are reused, so neither method allocates once warm. A Layer is not
// safe for concurrent use: use one per model layer (and per model
// replica). Decoding with a key/value cache (NewDecoder) and the fused
// inference forward (NewFused) have state of their own and leave the
// Layer's alone.
type Layer struct {
	shape

	// What Forward keeps for Backward and Probs.
	b, t  int
	ready bool
	probs []float32 // [B,H,T,T]

	// Backward's workspace: one T×T dP/dS matrix per worker.
	scratch []float32

	// The caller's slices during a call (nil between calls).
	qkv, y, dy, dqkv []float32
}

// forwardHeads and backwardHeads are a Layer seen as the parallel.Task of
// its per-(batch, head) work: part i is batch i/H, head i%H.
type (
	forwardHeads  Layer
	backwardHeads Layer
)

// RunPart computes the probabilities and output of one (batch, head).
func (f *forwardHeads) RunPart(_, i int) { (*Layer)(f).forwardHead(i) }

// RunPart computes dQ, dK and dV of one (batch, head).
func (bw *backwardHeads) RunPart(worker, i int) { (*Layer)(bw).backwardHead(worker, i) }

// Forward computes the heads of b sequences of t positions each: qkv
// [B,T,3C] holds each position's query, key and value side by side (a
// caller's projection x·WQKV + BQKV), and y [B,T,C] receives the heads'
// outputs concatenated (the input of the caller's output projection). It
// keeps the probabilities (see Probs) for Backward, which reads qkv
// again: qkv is not copied. y may not overlap qkv. Only the first b*t*3C
// elements of qkv and b*t*C of y are used; it panics if either is
// shorter, if b or t is less than 1, or if the probabilities (b·H·t² of
// them, or 3·b·t·C for qkv) would not fit in an int.
func (l *Layer) Forward(y, qkv []float32, b, t int) {
	const fn = "Layer.Forward"
	checkBT(fn, b, t)
	C := l.c
	checkQKV(fn, "qkv", qkv, b, t, C)
	checkRows(fn, "y", y, b, t, C)
	checkProduct(fn, "the probabilities", "b*H*t*t", b, l.h, t, t)

	l.ready = false
	l.b, l.t = b, t
	l.probs = grow(l.probs, b*l.h*t*t)
	l.qkv, l.y = qkv, y
	items := b * l.h
	parallel.Run((*forwardHeads)(l), items, workersFor(items))
	l.qkv, l.y = nil, nil
	l.ready = true
}

// forwardHead computes probabilities and output of item i = b*H + h.
func (l *Layer) forwardHead(i int) {
	b, h := i/l.h, i%l.h
	T, C, D := l.t, l.c, l.d
	ld := 3 * C
	base := b * T * ld
	q := l.qkv[base+h*D:]
	k := l.qkv[base+C+h*D:]
	v := l.qkv[base+2*C+h*D:]
	s := l.probs[i*T*T : (i+1)*T*T]
	y := l.y[b*T*C+h*D:]
	// In float32, one call for all the scores (K is packed once; the
	// tiles above the diagonal are skipped), then the softmax and P·V by
	// row blocks. In bfloat16, the scores of a row block too: queries
	// i0..i1-1 against keys 0..i1-1, the diagonal block then masked.
	if !l.bf16 {
		l.impl.MaskedScores(T, T, D, l.scale, q, ld, k, ld, 0, s, T)
	}
	for i0 := 0; i0 < T; i0 += rowBlock {
		i1 := min(i0+rowBlock, T)
		m := i1 - i0
		sb := s[i0*T:]
		if l.bf16 {
			l.gemm(false, true, m, i1, D, l.scale, q[i0*ld:], ld, k, ld, 0, sb, T)
			maskBlock(sb, T, i0, m, i1)
		}
		l.impl.Softmax(m, i1, sb, T, sb, T)
		if i1 < T {
			for r := i0; r < i1; r++ {
				clear(s[r*T+i1 : (r+1)*T])
			}
		}
		l.gemm(false, false, m, D, i1, 1, sb, T, v, ld, 0, y[i0*C:], C)
	}
}

// maskBlock sets the scores of query rows i0..i0+m-1 (s, row stride ld,
// row 0 query i0) above the diagonal and before column i1 to -Inf: the
// causal mask of a row block whose scores were computed whole.
func maskBlock(s []float32, ld, i0, m, i1 int) {
	inf := float32(math.Inf(-1))
	for r := 0; r < m-1; r++ {
		row := s[r*ld+i0+r+1 : r*ld+i1]
		for j := range row {
			row[j] = inf
		}
	}
}

// Backward computes the gradient of the last Forward: dy [B,T,C] is
// dL/dy, qkv [B,T,3C] must hold what that Forward read (unchanged), and
// dqkv [B,T,3C] receives dL/dqkv, written whole (the caller's projection
// takes it from there). dqkv may not overlap dy or qkv. It panics if
// Forward has not run or if a slice is shorter than that Forward's sizes.
// Backward does not change the state Forward kept: it may be called
// again.
func (l *Layer) Backward(dqkv, dy, qkv []float32) {
	const fn = "Layer.Backward"
	if !l.ready {
		panic("attention.Layer.Backward: no Forward to differentiate (call Forward first)")
	}
	b, t, C := l.b, l.t, l.c
	checkQKV(fn, "dqkv", dqkv, b, t, C)
	checkRows(fn, "dy", dy, b, t, C)
	checkQKV(fn, "qkv", qkv, b, t, C)

	items := b * l.h
	workers := workersFor(items)
	l.scratch = grow(l.scratch, workers*t*t)
	l.qkv, l.dy, l.dqkv = qkv, dy, dqkv
	parallel.Run((*backwardHeads)(l), items, workers)
	l.qkv, l.dy, l.dqkv = nil, nil, nil
}

// backwardHead computes dQ, dK and dV of item i = b*H + h from dY, with
// the worker's T×T scratch.
func (l *Layer) backwardHead(worker, i int) {
	b, h := i/l.h, i%l.h
	T, C, D := l.t, l.c, l.d
	ld := 3 * C
	base := b * T * ld
	q := l.qkv[base+h*D:]
	k := l.qkv[base+C+h*D:]
	v := l.qkv[base+2*C+h*D:]
	dq := l.dqkv[base+h*D:]
	dk := l.dqkv[base+C+h*D:]
	dv := l.dqkv[base+2*C+h*D:]
	p := l.probs[i*T*T : (i+1)*T*T]
	dy := l.dy[b*T*C+h*D:]
	ds := l.scratch[worker*T*T : (worker+1)*T*T]

	// Rows: dP = dY·Vᵀ, dS = softmax'(dP), dQ = scale·dS·K. dP is only
	// needed where P is not masked: MaskedScores computes it in one call
	// (V packed once, tiles above the diagonal skipped) and writes -Inf
	// above the diagonal. A row block i0..i1-1 has non-zero
	// probabilities only in columns < i1, so later columns are never
	// read; the -Inf inside its diagonal block become 0 (0·-Inf would be
	// NaN in the softmax backward).
	// In bfloat16 dP is computed by row blocks as the forward's scores
	// are, the diagonal block whole (its entries above the diagonal are
	// cleared next).
	if !l.bf16 {
		l.impl.MaskedScores(T, T, D, 1, dy, C, v, ld, 0, ds, T)
	}
	for i0 := 0; i0 < T; i0 += rowBlock {
		i1 := min(i0+rowBlock, T)
		m := i1 - i0
		db := ds[i0*T:]
		if l.bf16 {
			l.gemm(false, true, m, i1, D, 1, dy[i0*C:], C, v, ld, 0, db, T)
		}
		for r := i0; r < i1-1; r++ {
			clear(ds[r*T+r+1 : r*T+i1])
		}
		l.impl.SoftmaxBackward(m, i1, p[i0*T:], T, db, T, db, T)
		l.gemm(false, false, m, D, i1, l.scale, db, T, k, ld, 0, dq[i0*ld:], ld)
	}
	// Columns: dV = Pᵀ·dY and dK = scale·dSᵀ·Q; key block j0..j1-1 is
	// only seen by queries j0..T-1.
	for j0 := 0; j0 < T; j0 += rowBlock {
		j1 := min(j0+rowBlock, T)
		m, kk := j1-j0, T-j0
		l.gemm(true, false, m, D, kk, 1, p[j0*T+j0:], T, dy[j0*C:], C, 0, dv[j0*ld:], ld)
		l.gemm(true, false, m, D, kk, l.scale, ds[j0*T+j0:], T, q[j0*ld:], ld, 0, dk[j0*ld:], ld)
	}
}

// Probs returns the attention probabilities of the last Forward, [B,H,T,T]
// row-major (H = 1 for a single head): Probs()[((b*H+h)*T+i)*T+j] is how
// much position i of sequence b attends to position j in head h. Every
// row sums to 1 and the masked entries (j > i) are exactly 0. The slice is
// the layer's workspace: it is valid until the next Forward. It is nil
// before the first Forward.
func (l *Layer) Probs() []float32 {
	if !l.ready {
		return nil
	}
	return l.probs[:l.b*l.h*l.t*l.t]
}

// checkQKV panics unless len(s) >= 3*b*t*c (b, t, c >= 1), without
// computing a product that overflows.
func checkQKV(fn, name string, s []float32, b, t, c int) {
	if need, ok := product(3, b, t, c); !ok || len(s) < need {
		panic(fmt.Sprintf("attention.%s: len(%s) = %d, want >= 3*b*t*C = 3*%d*%d*%d = %s", fn, name, len(s), b, t, c, productString(3, b, t, c)))
	}
}
