// Package layernorm drives the one-row LayerNorm kernels of an ISA
// package (assembly that normalises or differentiates a single row): it
// turns them into the matrix kernels of kernelset.Set (LayerNorm,
// LayerNormBackward), so that every ISA runs its rows through the same Go
// loop. The loops slice each row with Go's bounds checks; the row kernels
// only ever see slices of exactly the row's length.
package layernorm

// LayerNormRow is the signature of a one-row LayerNorm kernel: y =
// (x-mean)*rstd*gamma + beta over len(x) >= 1 elements (y, gamma and beta
// exactly as long), returning mean and rstd. y may be x.
type LayerNormRow func(y, x, gamma, beta []float32, eps float32) (mean, rstd float32)

// LayerNorm returns the kernelset.Set.LayerNorm kernel that runs row on
// every row.
func LayerNorm(row LayerNormRow) func(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
	return func(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
		gamma, beta = gamma[:n], beta[:n]
		for i := 0; i < m; i++ {
			mu, r := row(y[i*ldy:i*ldy+n], x[i*ldx:i*ldx+n], gamma, beta, eps)
			if mean != nil {
				mean[i] = mu
			}
			if rstd != nil {
				rstd[i] = r
			}
		}
	}
}

// LayerNormBackwardRow is the signature of a one-row LayerNorm backward
// kernel over len(x) >= 1 elements (every other slice exactly as long):
// it accumulates into dx, dgamma and dbeta.
type LayerNormBackwardRow func(dx, dy, x, gamma, dgamma, dbeta []float32, mean, rstd float32)

// LayerNormBackward returns the kernelset.Set.LayerNormBackward kernel
// that runs row on every row, in order (so dgamma and dbeta add the rows
// in index order).
func LayerNormBackward(row LayerNormBackwardRow) func(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32) {
	return func(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32) {
		gamma, dgamma, dbeta = gamma[:n], dgamma[:n], dbeta[:n]
		mean, rstd = mean[:m], rstd[:m]
		for i := 0; i < m; i++ {
			row(dx[i*lddx:i*lddx+n], dy[i*lddy:i*lddy+n], x[i*ldx:i*ldx+n], gamma, dgamma, dbeta, mean[i], rstd[i])
		}
	}
}
