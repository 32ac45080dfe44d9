package attention

import (
	"math"

	"github.com/simdgpt/simdgpt/kernels"
)

// Block sizes of the fused forward: a block of fusedQ queries meets the
// keys in blocks of fusedK, so the scores it holds at once are a
// fusedQ × (fusedK+1) matrix whatever T is.
const (
	fusedQ = 64
	fusedK = 256
)

// fusedState is ForwardFused's workspace; it is separate from Forward's so
// inference does not disturb what Forward kept for Backward.
type fusedState struct {
	b, t    int
	qkv, y  []float32 // [B,T,3C], [B,T,C]
	scratch []float32 // per worker: scores fusedQ×(fusedK+1), row max and sum
}

const fusedScratch = fusedQ*(fusedK+1) + 2*fusedQ

// ForwardFused computes the same out = attention(x) as Forward, for
// inference: for each head and block of queries it walks the key blocks
// with an online softmax (a running row maximum and sum; the partial
// output is rescaled whenever the maximum grows), so no T×T matrix is
// ever formed and the memory per head is O(T·D), plus a fixed block of
// scores per goroutine. Key blocks after a query block are never visited.
// It keeps nothing for Backward or Probs and does not disturb what the
// last Forward kept. Arguments and panics are Forward's.
//
// Its results agree with Forward's up to float32 rounding (the sums run
// in a different order); the tests hold them to 5e-6 of the largest
// output.
func (l *Layer) ForwardFused(out, x []float32, b, t int, p Params) {
	const fn = "ForwardFused"
	checkBT(fn, b, t)
	n := b * t
	C := l.c
	checkRows(fn, "x", x, b, t, C)
	checkRows(fn, "out", out, b, t, C)
	p.check(fn, "p", C)

	f := &l.fused
	f.b, f.t = b, t
	f.qkv = grow(f.qkv, n*3*C)
	f.y = grow(f.y, n*C)
	project(n, C, 3*C, x, p.WQKV, p.BQKV, f.qkv)
	items := b * l.h * ((t + fusedQ - 1) / fusedQ)
	workers := workersFor(items)
	f.scratch = grow(f.scratch, workers*fusedScratch)
	l.phase = phaseFused
	runParallel(l, &l.it, items, workers)
	project(n, C, C, f.y, p.WProj, p.BProj, out)
}

// fusedItem computes one block of queries of one head: item i is
// (b*H + h)*blocks + query block.
func (l *Layer) fusedItem(worker, i int) {
	f := &l.fused
	T, C, D := f.t, l.c, l.d
	blocks := (T + fusedQ - 1) / fusedQ
	bh, qb := i/blocks, i%blocks
	b, h := bh/l.h, bh%l.h
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

	for k0 := 0; k0 < q1; k0 += fusedK {
		k1 := min(k0+fusedK, q1)
		kn := k1 - k0
		kernels.MaskedScores(m, kn, D, l.scale, q, ld, k[k0*ld:], ld, q0-k0, s, lds)
		// Put the new running maximum after each row: the softmax of the
		// row with it appended is exp(s_j - max)/Z and exp(0)/Z, so
		// dividing by the last entry leaves exp(s_j - max).
		for r := 0; r < m; r++ {
			row := s[r*lds : r*lds+kn]
			mx := kernels.Max(row)
			if k0 == 0 || mx > rowMax[r] {
				if k0 == 0 {
					rowSum[r] = 0
				} else {
					// Rescale what was summed under the old maximum.
					alpha := float32(math.Exp(float64(rowMax[r] - mx)))
					rowSum[r] *= alpha
					kernels.Scale(alpha, acc[r*C:r*C+D])
				}
				rowMax[r] = mx
			}
			s[r*lds+kn] = rowMax[r]
		}
		kernels.Softmax(m, kn+1, s, lds, s, lds)
		for r := 0; r < m; r++ {
			row := s[r*lds : r*lds+kn]
			kernels.Scale(1/s[r*lds+kn], row)
			rowSum[r] += kernels.Sum(row)
		}
		beta := float32(1)
		if k0 == 0 {
			beta = 0
		}
		kernels.Gemm(false, false, m, D, kn, 1, s, lds, v[k0*ld:], ld, beta, acc, C)
	}
	for r := 0; r < m; r++ {
		kernels.Scale(1/rowSum[r], acc[r*C:r*C+D])
	}
}
