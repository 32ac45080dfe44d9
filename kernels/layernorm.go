package kernels

import "unsafe"

// LayerNorm normalises each of the m rows of the m×n matrix x (leading
// dimension ldx) to zero mean and unit variance, then scales and shifts
// it, writing y (leading dimension ldy):
//
//	mean_i = sum_j x[i,j] / n
//	rstd_i = 1 / sqrt(sum_j (x[i,j]-mean_i)² / n + eps)
//	y[i,j] = (x[i,j]-mean_i) * rstd_i * gamma[j] + beta[j]
//
// gamma and beta must hold at least n values. When mean and rstd are not
// nil they must hold at least m values and receive mean_i and rstd_i,
// which LayerNormBackward needs. y may be x itself (the same slice with
// the same leading dimension); otherwise the two must not overlap, and
// no written matrix or vector (y, mean, rstd) may overlap another
// argument (it panics if they do).
//
// Accuracy against a float64 computation (TestLayerNormSweep, rows of up
// to 1031 with means far from 0): the SIMD implementations, which sum in
// four vector accumulators and take the square root in float32, are
// within 1e-6 of |gamma[j]|·max|xhat| + |beta[j]| in y (4.9e-7 measured)
// and 5e-7 relative in rstd; generic, whose sums are sequential, within
// 4e-6·max(1, n/64) in y. A row holding NaN or ±Inf becomes all NaN; a
// constant row gives y = beta. If a row's sums overflow float32 (elements
// near 1e38), implementations may differ between Inf and NaN results.
func (p *Impl) LayerNorm(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
	const fn = "LayerNorm"
	checkDims(fn, []string{"m", "n"}, m, n)
	checkMatrix(fn, "x", x, m, n, ldx)
	checkMatrix(fn, "y", y, m, n, ldy)
	checkLen(fn, "gamma", gamma, n)
	checkLen(fn, "beta", beta, n)
	checkOptionalLen(fn, "mean", mean, m)
	checkOptionalLen(fn, "rstd", rstd, m)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart(fn, "y", y, ldy, "x", x, ldx, m, n)
	checkStatsApart(fn, m, n, gamma, beta, mean, rstd)
	checkNoOverlap(fn, "y", y, m, n, ldy, "gamma", gamma, 1, n, n)
	checkNoOverlap(fn, "y", y, m, n, ldy, "beta", beta, 1, n, n)
	checkVecMatApart(fn, "mean", mean, m, "x", x, m, n, ldx)
	checkVecMatApart(fn, "rstd", rstd, m, "x", x, m, n, ldx)
	checkVecMatApart(fn, "mean", mean, m, "y", y, m, n, ldy)
	checkVecMatApart(fn, "rstd", rstd, m, "y", y, m, n, ldy)
	p.set.LayerNorm(m, n, x, ldx, gamma, beta, eps, y, ldy, mean, rstd)
}

// LayerNormBackward computes the gradients of LayerNorm over the m×n
// matrix x (leading dimension ldx) from the gradient dy of its output
// (lddy) and the mean and rstd LayerNorm saved (at least m values each).
// It ACCUMULATES into dx (lddx), dgamma and dbeta (at least n values
// each): with xhat = (x-mean)*rstd and dn = dy*gamma,
//
//	dx[i,j]   += rstd_i * (dn[i,j] - sum_k dn[i,k]/n - xhat[i,j] * sum_k dn[i,k]*xhat[i,k]/n)
//	dgamma[j] += sum_i dy[i,j]*xhat[i,j]
//	dbeta[j]  += sum_i dy[i,j]
//
// No written matrix or vector (dx, dgamma, dbeta) may overlap another
// argument (it panics if one does).
// Rows are added into dgamma and dbeta in index order. Accuracy as for
// LayerNorm: within a few float32 roundings of generic relative to each
// sum's terms (TestLayerNormBackwardSweep).
func (p *Impl) LayerNormBackward(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32) {
	const fn = "LayerNormBackward"
	checkDims(fn, []string{"m", "n"}, m, n)
	checkMatrix(fn, "dy", dy, m, n, lddy)
	checkMatrix(fn, "x", x, m, n, ldx)
	checkMatrix(fn, "dx", dx, m, n, lddx)
	checkLen(fn, "mean", mean, m)
	checkLen(fn, "rstd", rstd, m)
	checkLen(fn, "gamma", gamma, n)
	checkLen(fn, "dgamma", dgamma, n)
	checkLen(fn, "dbeta", dbeta, n)
	if m == 0 || n == 0 {
		return
	}
	checkNoOverlap(fn, "dx", dx, m, n, lddx, "dy", dy, m, n, lddy)
	checkNoOverlap(fn, "dx", dx, m, n, lddx, "x", x, m, n, ldx)
	checkNoOverlap(fn, "dgamma", dgamma, 1, n, n, "dbeta", dbeta, 1, n, n)
	reads := [...]struct {
		name string
		s    []float32
		n    int
	}{{"mean", mean, m}, {"rstd", rstd, m}, {"gamma", gamma, n}}
	for _, r := range reads {
		checkNoOverlap(fn, "dx", dx, m, n, lddx, r.name, r.s, 1, r.n, r.n)
		checkVecApart(fn, "dgamma", dgamma, n, r.name, r.s, r.n)
		checkVecApart(fn, "dbeta", dbeta, n, r.name, r.s, r.n)
	}
	for _, g := range [...]struct {
		name string
		s    []float32
	}{{"dgamma", dgamma}, {"dbeta", dbeta}} {
		checkVecMatApart(fn, g.name, g.s, n, "dx", dx, m, n, lddx)
		checkVecMatApart(fn, g.name, g.s, n, "dy", dy, m, n, lddy)
		checkVecMatApart(fn, g.name, g.s, n, "x", x, m, n, ldx)
	}
	p.set.LayerNormBackward(m, n, dy, lddy, x, ldx, mean, rstd, gamma, dx, lddx, dgamma, dbeta)
}

// AddLayerNorm adds the residual r to x and normalises the sum, row by
// row, in one pass over memory: for each of the m rows,
//
//	sum[i,j] = x[i,j] + r[i,j]
//	y[i,:]   = LayerNorm(sum[i,:]) with gamma, beta and eps, saving
//	           mean[i] and rstd[i] when they are not nil
//
// exactly as Add followed by LayerNorm would compute them (the results
// are bitwise equal), but the sum is normalised 16 KiB of rows at a time,
// while those rows are still in the L1 cache, where the separate calls
// write the whole sum and read it back (PERF.md, "Fusion", compares the
// two). It is the residual connection of a pre-LayerNorm
// transformer block followed by the next block's LayerNorm: the backward
// pass needs sum (the LayerNorm's input), mean and rstd. The leading
// dimensions are ldx, ldr, ldsum and ldy. sum may be x or r (the same
// slice with the same leading dimension) and y may be sum (even when sum
// is x or r); otherwise the
// written matrices must not overlap the others, and no written matrix or
// vector (sum, y, mean, rstd) may overlap another argument (it panics if
// one does).
func (p *Impl) AddLayerNorm(m, n int, x []float32, ldx int, r []float32, ldr int, sum []float32, ldsum int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
	const fn = "AddLayerNorm"
	checkDims(fn, []string{"m", "n"}, m, n)
	checkMatrix(fn, "x", x, m, n, ldx)
	checkMatrix(fn, "r", r, m, n, ldr)
	checkMatrix(fn, "sum", sum, m, n, ldsum)
	checkMatrix(fn, "y", y, m, n, ldy)
	checkLen(fn, "gamma", gamma, n)
	checkLen(fn, "beta", beta, n)
	checkOptionalLen(fn, "mean", mean, m)
	checkOptionalLen(fn, "rstd", rstd, m)
	if m == 0 || n == 0 {
		return
	}
	checkInPlaceOrApart(fn, "sum", sum, ldsum, "x", x, ldx, m, n)
	checkInPlaceOrApart(fn, "sum", sum, ldsum, "r", r, ldr, m, n)
	// y is sum itself (and then whatever sum is), or apart from all three.
	if unsafe.SliceData(y) != unsafe.SliceData(sum) || ldy != ldsum {
		checkNoOverlap(fn, "y", y, m, n, ldy, "sum", sum, m, n, ldsum)
		checkNoOverlap(fn, "y", y, m, n, ldy, "x", x, m, n, ldx)
		checkNoOverlap(fn, "y", y, m, n, ldy, "r", r, m, n, ldr)
	}
	checkStatsApart(fn, m, n, gamma, beta, mean, rstd)
	for _, w := range [...]struct {
		name string
		s    []float32
		ld   int
	}{{"sum", sum, ldsum}, {"y", y, ldy}} {
		checkNoOverlap(fn, w.name, w.s, m, n, w.ld, "gamma", gamma, 1, n, n)
		checkNoOverlap(fn, w.name, w.s, m, n, w.ld, "beta", beta, 1, n, n)
	}
	for _, a := range [...]struct {
		name string
		s    []float32
		ld   int
	}{{"x", x, ldx}, {"r", r, ldr}, {"sum", sum, ldsum}, {"y", y, ldy}} {
		checkVecMatApart(fn, "mean", mean, m, a.name, a.s, m, n, a.ld)
		checkVecMatApart(fn, "rstd", rstd, m, a.name, a.s, m, n, a.ld)
	}
	// Rows go in chunks of about addLNChunkFloats: the chunk's sums are
	// written, then normalised by one LayerNorm call while still in L1.
	chunk := max(1, addLNChunkFloats/n)
	for i0 := 0; i0 < m; i0 += chunk {
		rows := min(chunk, m-i0)
		if ldx == n && ldr == n && ldsum == n {
			p.set.Add(sum[i0*n:(i0+rows)*n], x[i0*n:(i0+rows)*n], r[i0*n:(i0+rows)*n])
		} else {
			for i := i0; i < i0+rows; i++ {
				p.set.Add(sum[i*ldsum:i*ldsum+n], x[i*ldx:i*ldx+n], r[i*ldr:i*ldr+n])
			}
		}
		var mi, ri []float32
		if mean != nil {
			mi = mean[i0 : i0+rows]
		}
		if rstd != nil {
			ri = rstd[i0 : i0+rows]
		}
		p.set.LayerNorm(rows, n, sum[i0*ldsum:], ldsum, gamma, beta, eps, y[i0*ldy:], ldy, mi, ri)
	}
}

// addLNChunkFloats is about how many floats of the sum AddLayerNorm writes
// before normalising them: 16 KiB, half of the smallest L1 data cache of
// the CPUs it runs on, so the sums are read back from L1.
const addLNChunkFloats = 4096

// checkStatsApart panics if the optional outputs mean and rstd (m values
// each, or nil) overlap each other or the parameters gamma and beta (n
// values each) of a LayerNorm.
func checkStatsApart(fn string, m, n int, gamma, beta, mean, rstd []float32) {
	checkVecApart(fn, "mean", mean, min(m, len(mean)), "rstd", rstd, min(m, len(rstd)))
	for _, w := range [...]struct {
		name string
		s    []float32
	}{{"mean", mean}, {"rstd", rstd}} {
		k := min(m, len(w.s))
		checkVecApart(fn, w.name, w.s, k, "gamma", gamma, n)
		checkVecApart(fn, w.name, w.s, k, "beta", beta, n)
	}
}
