package generic

import "math"

// LayerNorm normalises each of the m rows of x (n columns, leading
// dimension ldx) to zero mean and unit variance, then scales and shifts it:
//
//	mean_i = sum_j x[i,j] / n
//	rstd_i = 1 / sqrt(sum_j (x[i,j]-mean_i)² / n + eps)
//	y[i,j] = (x[i,j]-mean_i) * rstd_i * gamma[j] + beta[j]
//
// y has leading dimension ldy and may be x itself (same slice, same
// leading dimension). When mean and rstd are not nil, mean[i] and rstd[i]
// receive mean_i and rstd_i for the backward pass. The sums are float32 in
// index order; the square root is taken in float64.
func LayerNorm(m, n int, x []float32, ldx int, gamma, beta []float32, eps float32, y []float32, ldy int, mean, rstd []float32) {
	gamma, beta = gamma[:n], beta[:n]
	for i := 0; i < m; i++ {
		xi := x[i*ldx : i*ldx+n]
		mu, r := LayerNormRow(y[i*ldy:i*ldy+n], xi, gamma, beta, eps)
		if mean != nil {
			mean[i] = mu
		}
		if rstd != nil {
			rstd[i] = r
		}
	}
}

// LayerNormRow normalises one row: y = (x-mean)*rstd*gamma + beta, with
// gamma, beta and y at least as long as x (which must not be empty). It
// returns mean and rstd. y may be x.
func LayerNormRow(y, x, gamma, beta []float32, eps float32) (mean, rstd float32) {
	n := len(x)
	y, gamma, beta = y[:n], gamma[:n], beta[:n]
	var s float32
	for _, v := range x {
		s += v
	}
	mean = s / float32(n)
	var ss float32
	for _, v := range x {
		d := v - mean
		ss += d * d
	}
	rstd = float32(1 / math.Sqrt(float64(ss/float32(n))+float64(eps)))
	for j, v := range x {
		y[j] = (v-mean)*rstd*gamma[j] + beta[j]
	}
	return mean, rstd
}

// LayerNormBackward computes the gradients of LayerNorm for m rows of n
// columns, given the gradient dy (leading dimension lddy) of its output,
// its input x (ldx), and the mean and rstd it saved. It ACCUMULATES: with
// xhat = (x-mean)*rstd and dn = dy*gamma,
//
//	dx[i,j]   += rstd_i * (dn[i,j] - mean_j'(dn[i,:]) - xhat[i,j]*mean_j'(dn[i,:]*xhat[i,:]))
//	dgamma[j] += sum_i dy[i,j]*xhat[i,j]
//	dbeta[j]  += sum_i dy[i,j]
//
// dx has leading dimension lddx. Rows are processed in order, so dgamma
// and dbeta sum them in index order.
func LayerNormBackward(m, n int, dy []float32, lddy int, x []float32, ldx int, mean, rstd, gamma []float32, dx []float32, lddx int, dgamma, dbeta []float32) {
	for i := 0; i < m; i++ {
		LayerNormBackwardRow(dx[i*lddx:i*lddx+n], dy[i*lddy:i*lddy+n], x[i*ldx:i*ldx+n], gamma, dgamma, dbeta, mean[i], rstd[i])
	}
}

// LayerNormBackwardRow is LayerNormBackward for one row of len(x) >= 1
// columns (dx, dy, gamma, dgamma and dbeta at least as long).
func LayerNormBackwardRow(dx, dy, x, gamma, dgamma, dbeta []float32, mean, rstd float32) {
	n := len(x)
	dx, dy, gamma, dgamma, dbeta = dx[:n], dy[:n], gamma[:n], dgamma[:n], dbeta[:n]
	var sd, sdx float32 // sums of dn and dn*xhat
	for j, v := range x {
		xh := (v - mean) * rstd
		dn := dy[j] * gamma[j]
		sd += dn
		sdx += dn * xh
		dgamma[j] += dy[j] * xh
		dbeta[j] += dy[j]
	}
	sd /= float32(n)
	sdx /= float32(n)
	for j, v := range x {
		xh := (v - mean) * rstd
		dx[j] += rstd * (dy[j]*gamma[j] - sd - xh*sdx)
	}
}
