package kernels

import (
	"math"
	"testing"
)

// FuzzLayerNorm decodes a matrix and checks both LayerNorm kernels of
// every SIMD implementation against generic:
//
//	data[0]    rows m (1 + data[0]%3)
//	data[1]    element offset of the slices (mod 8)
//	data[2:]   the elements, two bytes each (fuzzFloat without specials,
//	           moderate values k/256, or NaN and ±Inf for a high byte
//	           0x7f/0x80), then gamma, beta and dy from the same decoder
//
// n is what the bytes allow. Rows holding NaN or ±Inf must become all NaN
// everywhere; others must agree within the documented tolerances.
func FuzzLayerNorm(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{2, 3, 0, 0x7f, 9, 9, 200, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add(make([]byte, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		m, off := 1+int(data[0])%3, int(data[1])%8
		vals := data[2:]
		n := len(vals) / 2 / (m + 3)
		if n == 0 {
			return
		}
		k := 0
		next := func() float32 {
			v := lnFuzzFloat(vals[2*k:])
			k++
			return v
		}
		x, dy := make([]float32, m*n), make([]float32, m*n)
		gamma, beta := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = next()
		}
		for j := range gamma {
			gamma[j], beta[j] = next(), next()
		}
		for i := range dy {
			dy[i] = lnFuzzFloat(vals[2*(i%(len(vals)/2)):])
		}
		run := func(p *Impl) (y, mean, rstd, dx, dg, db []float32) {
			y, mean, rstd = offsetCopy(make([]float32, m*n), off), make([]float32, m), make([]float32, m)
			p.LayerNorm(m, n, offsetCopy(x, off), n, gamma, beta, 1e-5, y, n, mean, rstd)
			dx, dg, db = make([]float32, m*n), make([]float32, n), make([]float32, n)
			p.LayerNormBackward(m, n, dy, n, x, n, mean, rstd, gamma, dx, n, dg, db)
			return
		}
		wy, wmean, wrstd, wdx, wdg, wdb := run(genericImpl)
		for _, p := range nonGeneric() {
			y, mean, rstd, dx, dg, db := run(p)
			for i := 0; i < m; i++ {
				bad := false
				var scale float64
				for j := 0; j < n; j++ {
					v := float64(x[i*n+j])
					bad = bad || math.IsNaN(v) || math.IsInf(v, 0)
					scale = math.Max(scale, math.Abs(v))
				}
				if bad {
					for j := 0; j < n; j++ {
						if !math.IsNaN(float64(y[i*n+j])) {
							t.Fatalf("%s: row %d holds NaN or Inf but y[%d] = %v", p.Name(), i, j, y[i*n+j])
						}
					}
					continue
				}
				if !closeTo(mean[i], wmean[i], 1e-6*scale*float64(n)) || !closeTo(rstd[i], wrstd[i], 1e-5*float64(wrstd[i])*float64(n)) {
					t.Fatalf("%s row %d: mean %v rstd %v, generic %v %v", p.Name(), i, mean[i], rstd[i], wmean[i], wrstd[i])
				}
				for j := 0; j < n; j++ {
					tol := 2e-5 * float64(n) * (math.Abs(float64(gamma[j]))*math.Sqrt(float64(n)) + math.Abs(float64(beta[j])) + 1)
					if !closeTo(y[i*n+j], wy[i*n+j], tol) {
						t.Fatalf("%s: y[%d,%d] = %v, generic %v", p.Name(), i, j, y[i*n+j], wy[i*n+j])
					}
				}
			}
			// dbeta sums dy over the rows in order everywhere: exact.
			for j := 0; j < n; j++ {
				if !closeTo(db[j], wdb[j], 0) {
					t.Fatalf("%s: dbeta[%d] = %v, generic %v", p.Name(), j, db[j], wdb[j])
				}
				if !closeTo(dg[j], wdg[j], 1e-4*float64(n*m)*(1+math.Abs(float64(wdg[j])))) {
					t.Fatalf("%s: dgamma[%d] = %v, generic %v", p.Name(), j, dg[j], wdg[j])
				}
			}
			// dx is a difference of terms that can be far larger than it
			// (rows of nearly equal values with large dy and gamma), so
			// its tolerance follows the terms, as documented: a few
			// hundred float32 roundings per element summed, times rstd.
			for i := 0; i < m; i++ {
				dmax, xmax, sd, sdx := lnBackTerms(x[i*n:(i+1)*n], dy[i*n:(i+1)*n], gamma, wmean[i], wrstd[i])
				r := float64(wrstd[i])
				for j := 0; j < n; j++ {
					tol := 1e-5 * float64(n) * r * (dmax + sd + xmax*sdx)
					if !closeTo(dx[i*n+j], wdx[i*n+j], tol+1e-4*(1+math.Abs(float64(wdx[i*n+j])))) {
						t.Fatalf("%s: dx[%d,%d] = %v, generic %v (tolerance %g)", p.Name(), i, j, dx[i*n+j], wdx[i*n+j], tol)
					}
				}
			}
		}
	})
}

// lnFuzzFloat decodes a moderate value k/256 from two bytes, or NaN, +Inf
// or -Inf for a high byte of 0x7f or 0x80 (by the low byte, mod 3).
func lnFuzzFloat(b []byte) float32 {
	if b[1] == 0x7f || b[1] == 0x80 {
		switch b[0] % 3 {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1))
		default:
			return float32(math.Inf(-1))
		}
	}
	return float32(int16(uint16(b[0])|uint16(b[1])<<8)) / 256
}

// lnBackTerms returns, in float64 for one row, the magnitudes of the terms
// LayerNormBackward's dx combines: max|dy*gamma|, max|xhat|, mean|dy*gamma|
// and mean|dy*gamma*xhat|.
func lnBackTerms(x, dy, gamma []float32, mean, rstd float32) (dmax, xmax, sd, sdx float64) {
	for j, v := range x {
		xh := math.Abs((float64(v) - float64(mean)) * float64(rstd))
		dn := math.Abs(float64(dy[j]) * float64(gamma[j]))
		dmax, xmax = math.Max(dmax, dn), math.Max(xmax, xh)
		sd += dn
		sdx += dn * xh
	}
	n := float64(len(x))
	return dmax, xmax, sd / n, sdx / n
}
