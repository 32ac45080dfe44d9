package attention

import (
	"fmt"

	"github.com/simdgpt/simdgpt/internal/parallel"
)

// Layer is one causal self-attention layer of width C with H heads, for
// training: Forward, then Backward of the same call, and Probs. It owns
// the activations Backward needs and a workspace that grow on first use
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
	xs    []float32 // copy of x, [B,T,C]
	qkv   []float32 // [B,T,3C]
	probs []float32 // [B,H,T,T]
	y     []float32 // heads concatenated, [B,T,C]

	// Backward's workspace.
	dy      []float32 // dL/dy, [B,T,C]
	dqkv    []float32 // dL/dqkv, [B,T,3C]
	scratch []float32 // one T×T dP/dS matrix per worker
	colSum  []float32 // bias gradient of one call
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

// Forward computes out = attention(x) for x [B,T,C] (b sequences of t
// positions each); out is [B,T,C]. It keeps what Backward needs: a copy
// of x, qkv, the probabilities (see Probs) and the concatenated heads.
// out may be the same slice as x. Only the first b*t*C elements of x and
// out are used; it panics if either is shorter, if b or t is less than 1,
// if the probabilities (b·H·t² of them, or 3·b·t·C for qkv) would not fit
// in an int, or if a slice of p does not have its exact size.
func (l *Layer) Forward(out, x []float32, b, t int, p Params) {
	const fn = "Layer.Forward"
	checkBT(fn, b, t)
	n := b * t
	C := l.c
	checkRows(fn, "x", x, b, t, C)
	checkRows(fn, "out", out, b, t, C)
	checkProduct(fn, "the qkv workspace", "3*b*t*C", 3, b, t, C)
	checkProduct(fn, "the probabilities", "b*H*t*t", b, l.h, t, t)
	p.check(fn, "p", C)

	l.ready = false
	l.b, l.t = b, t
	l.xs = grow(l.xs, n*C)
	l.qkv = grow(l.qkv, n*3*C)
	l.probs = grow(l.probs, b*l.h*t*t)
	l.y = grow(l.y, n*C)

	copy(l.xs, x[:n*C])
	l.project(n, C, 3*C, l.xs, p.WQKV, p.BQKV, l.qkv)
	items := b * l.h
	parallel.Run((*forwardHeads)(l), items, workersFor(items))
	l.project(n, C, C, l.y, p.WProj, p.BProj, out)
	l.ready = true
}

// ForwardHeads is Forward without its two projections, for a caller that
// computes them itself (with weights in another format than float32):
// qkv [B,T,3C] holds each position's query, key and value side by side
// (x·WQKV + BQKV) and y [B,T,C] receives the heads' outputs concatenated,
// the input of the output projection. Each (batch, head) is computed as
// Forward computes it, so with qkv from the same projection y holds the
// same values, bit for bit. It keeps nothing for Backward and Probs:
// until the next Forward, Backward panics and Probs returns nil. y may
// not overlap qkv. It panics if b or t is less than 1, if
// qkv is shorter than b*t*3C or y shorter than b*t*C, or if the
// probabilities (b·H·t² of them) would not fit in an int.
func (l *Layer) ForwardHeads(y, qkv []float32, b, t int) {
	const fn = "Layer.ForwardHeads"
	checkBT(fn, b, t)
	n := b * t
	C := l.c
	checkProduct(fn, "the qkv workspace", "3*b*t*C", 3, b, t, C)
	checkProduct(fn, "the probabilities", "b*H*t*t", b, l.h, t, t)
	checkRows(fn, "y", y, b, t, C)
	if len(qkv) < 3*n*C {
		panic(fmt.Sprintf("attention.%s: len(qkv) = %d, want >= 3*b*t*C = 3*%d*%d*%d = %d", fn, len(qkv), b, t, C, 3*n*C))
	}

	l.ready = false
	l.b, l.t = b, t
	l.qkv = grow(l.qkv, n*3*C)
	l.probs = grow(l.probs, b*l.h*t*t)
	l.y = grow(l.y, n*C)
	copy(l.qkv, qkv[:n*3*C])
	items := b * l.h
	parallel.Run((*forwardHeads)(l), items, workersFor(items))
	copy(y[:n*C], l.y)
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
	// One call for all the scores (K is packed once; the tiles above the
	// diagonal are skipped), then the softmax and P·V by row blocks.
	l.impl.MaskedScores(T, T, D, l.scale, q, ld, k, ld, 0, s, T)
	for i0 := 0; i0 < T; i0 += rowBlock {
		i1 := min(i0+rowBlock, T)
		m := i1 - i0
		sb := s[i0*T:]
		l.impl.Softmax(m, i1, sb, T, sb, T)
		if i1 < T {
			for r := i0; r < i1; r++ {
				clear(s[r*T+i1 : (r+1)*T])
			}
		}
		l.impl.Gemm(false, false, m, D, i1, 1, sb, T, v, ld, 0, y[i0*C:], C)
	}
}

// Backward computes the gradients of the last Forward, which must have
// used the same parameters p. dout is dL/dout [B,T,C]. dx = dL/dx [B,T,C]
// is written (overwritten); the parameter gradients are accumulated into
// g (g.WQKV += dL/dWQKV and so on), so g can sum over layers' calls or be
// zeroed by the caller. dx may be the same slice as dout. It panics if
// Forward has not run, if dx or dout is shorter than B*T*C of that
// Forward, or if a slice of p or g does not have its exact size. Backward
// does not change the state Forward kept: it may be called again.
func (l *Layer) Backward(dx, dout []float32, p Params, g Params) {
	const fn = "Layer.Backward"
	if !l.ready {
		panic("attention.Layer.Backward: no Forward to differentiate (call Forward first)")
	}
	b, t, C := l.b, l.t, l.c
	n := b * t
	checkRows(fn, "dx", dx, b, t, C)
	checkRows(fn, "dout", dout, b, t, C)
	p.check(fn, "p", C)
	g.check(fn, "g", C)

	items := b * l.h
	workers := workersFor(items)
	l.dy = grow(l.dy, n*C)
	l.dqkv = grow(l.dqkv, n*3*C)
	l.scratch = grow(l.scratch, workers*t*t)

	// out = y·WProj + BProj
	l.addColumnSums(g.BProj, dout, n, C)
	l.impl.Gemm(true, false, C, C, n, 1, l.y, C, dout, C, 1, g.WProj, C)
	l.impl.Gemm(false, true, n, C, C, 1, dout, C, p.WProj, C, 0, l.dy, C)

	parallel.Run((*backwardHeads)(l), items, workers)

	// qkv = x·WQKV + BQKV
	C3 := 3 * C
	l.addColumnSums(g.BQKV, l.dqkv, n, C3)
	l.impl.Gemm(true, false, C, C3, n, 1, l.xs, C, l.dqkv, C3, 1, g.WQKV, C3)
	l.impl.Gemm(false, true, n, C, C3, 1, l.dqkv, C3, p.WQKV, C3, 0, dx, C)
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
	l.impl.MaskedScores(T, T, D, 1, dy, C, v, ld, 0, ds, T)
	for i0 := 0; i0 < T; i0 += rowBlock {
		i1 := min(i0+rowBlock, T)
		m := i1 - i0
		db := ds[i0*T:]
		for r := i0; r < i1-1; r++ {
			clear(ds[r*T+r+1 : r*T+i1])
		}
		l.impl.SoftmaxBackward(m, i1, p[i0*T:], T, db, T, db, T)
		l.impl.Gemm(false, false, m, D, i1, l.scale, db, T, k, ld, 0, dq[i0*ld:], ld)
	}
	// Columns: dV = Pᵀ·dY and dK = scale·dSᵀ·Q; key block j0..j1-1 is
	// only seen by queries j0..T-1.
	for j0 := 0; j0 < T; j0 += rowBlock {
		j1 := min(j0+rowBlock, T)
		m, kk := j1-j0, T-j0
		l.impl.Gemm(true, false, m, D, kk, 1, p[j0*T+j0:], T, dy[j0*C:], C, 0, dv[j0*ld:], ld)
		l.impl.Gemm(true, false, m, D, kk, l.scale, ds[j0*T+j0:], T, q[j0*ld:], ld, 0, dk[j0*ld:], ld)
	}
}

// addColumnSums adds the column sums of the n×m matrix a to dst. The sums
// are formed apart and added once, so accumulating gradients over calls
// rounds like Gemm with beta = 1 does.
func (l *Layer) addColumnSums(dst, a []float32, n, m int) {
	l.colSum = grow(l.colSum, m)
	clear(l.colSum)
	for r := 0; r < n; r++ {
		l.impl.Add(l.colSum, l.colSum, a[r*m:(r+1)*m])
	}
	l.impl.Add(dst, dst, l.colSum)
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
