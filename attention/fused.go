package attention

import (
	"math"

	"github.com/simdgpt/simdgpt/internal/parallel"
)

// Block sizes of the fused forward: a block of fusedQ queries meets the
// keys in blocks of fusedK, so the scores it holds at once are a
// fusedQ × (fusedK+1) matrix whatever T is.
const (
	fusedQ = 64
	fusedK = 256
)

// fusedScratch is the scratch of one worker: scores fusedQ×(fusedK+1),
// row maximum and row sum.
const fusedScratch = fusedQ*(fusedK+1) + 2*fusedQ

// Fused is a layer's forward pass for inference: the same output as
// Layer.Forward without ever forming a T×T matrix, for long contexts.
// Make one with Layer.NewFused; it shares the layer's shape and kernel
// implementation but none of its state (it keeps nothing for Backward or
// Probs, and does not disturb what the layer's last Forward kept). A
// Fused is not safe for concurrent use; it allocates nothing once its
// workspace has grown to the largest call.
type Fused struct {
	shape

	// The call in progress: its length, the caller's qkv [B,T,3C] and y
	// [B,T,C], and fusedScratch per worker.
	t       int
	qkv, y  []float32
	scratch []float32
}

// NewFused returns the fused inference forward of l's shape and
// implementation.
func (l *Layer) NewFused() *Fused {
	return &Fused{shape: l.shape}
}

// fusedBlocks is a Fused seen as the parallel.Task of one Forward: part
// i is query block i%blocks of batch element and head i/blocks.
type fusedBlocks Fused

// RunPart computes one block of queries of one head with the worker's
// scratch.
func (fb *fusedBlocks) RunPart(worker, i int) { (*Fused)(fb).block(worker, i) }

// Forward computes the same heads as Layer.Forward, y [B,T,C] from qkv
// [B,T,3C]: for each head and block of queries it walks the key blocks
// with an online softmax (a running row maximum and sum; the partial
// output is rescaled whenever the maximum grows), so no T×T matrix is
// ever formed and the memory per head is O(T·D), plus a fixed block of
// scores per goroutine. Key blocks after a query block are never visited.
// Arguments and panics are Layer.Forward's, but for the probabilities,
// which it never holds.
//
// Its results agree with Layer.Forward's up to float32 rounding (the sums
// run in a different order); the tests hold them to 5e-6 of the largest
// output.
func (f *Fused) Forward(y, qkv []float32, b, t int) {
	const fn = "Fused.Forward"
	checkBT(fn, b, t)
	C := f.c
	checkQKV(fn, "qkv", qkv, b, t, C)
	checkRows(fn, "y", y, b, t, C)

	f.t = t
	f.qkv, f.y = qkv, y
	items := b * f.h * ((t + fusedQ - 1) / fusedQ)
	workers := workersFor(items)
	f.scratch = grow(f.scratch, workers*fusedScratch)
	parallel.Run((*fusedBlocks)(f), items, workers)
	f.qkv, f.y = nil, nil
}

// block computes one block of queries of one head: item i is
// (b*H + h)*blocks + query block.
func (f *Fused) block(worker, i int) {
	T, C, D := f.t, f.c, f.d
	blocks := (T + fusedQ - 1) / fusedQ
	bh, qb := i/blocks, i%blocks
	b, h := bh/f.h, bh%f.h
	ld := 3 * C
	base := b * T * ld
	q0 := qb * fusedQ
	q1 := min(q0+fusedQ, T)
	m := q1 - q0
	q := f.qkv[base+q0*ld+h*D:]
	k := f.qkv[base+C+h*D:]
	v := f.qkv[base+2*C+h*D:]
	acc := f.y[(b*T+q0)*C+h*D:] // the m×D output block, ld C
	sc := f.scratch[worker*fusedScratch : (worker+1)*fusedScratch]
	const lds = fusedK + 1
	s := sc[:fusedQ*lds]
	rowMax := sc[fusedQ*lds : fusedQ*lds+fusedQ]
	rowSum := sc[fusedQ*lds+fusedQ : fusedQ*lds+2*fusedQ]
	impl := f.impl

	for k0 := 0; k0 < q1; k0 += fusedK {
		k1 := min(k0+fusedK, q1)
		kn := k1 - k0
		impl.MaskedScores(m, kn, D, f.scale, q, ld, k[k0*ld:], ld, q0-k0, s, lds)
		// Put the new running maximum after each row: the softmax of the
		// row with it appended is exp(s_j - max)/Z and exp(0)/Z, so
		// dividing by the last entry leaves exp(s_j - max).
		for r := 0; r < m; r++ {
			row := s[r*lds : r*lds+kn]
			mx := impl.Max(row)
			if k0 == 0 || mx > rowMax[r] {
				if k0 == 0 {
					rowSum[r] = 0
				} else {
					// Rescale what was summed under the old maximum.
					alpha := float32(math.Exp(float64(rowMax[r] - mx)))
					rowSum[r] *= alpha
					impl.Scale(alpha, acc[r*C:r*C+D])
				}
				rowMax[r] = mx
			}
			s[r*lds+kn] = rowMax[r]
		}
		impl.Softmax(m, kn+1, s, lds, s, lds)
		for r := 0; r < m; r++ {
			row := s[r*lds : r*lds+kn]
			impl.Scale(1/s[r*lds+kn], row)
			rowSum[r] += impl.Sum(row)
		}
		beta := float32(1)
		if k0 == 0 {
			beta = 0
		}
		f.gemm(false, false, m, D, kn, 1, s, lds, v[k0*ld:], ld, beta, acc, C)
	}
	for r := 0; r < m; r++ {
		impl.Scale(1/rowSum[r], acc[r*C:r*C+D])
	}
}
