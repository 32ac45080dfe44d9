package kernels

import (
	"math"
	"strings"
	"testing"
)

// layerNormCols are the row lengths of the LayerNorm tests: every length
// up to past the four-vector unroll of AVX-512 (64) and its tails, then
// lengths around larger unroll multiples and a transformer's widths.
var layerNormCols = func() []int {
	var s []int
	for n := 1; n <= 70; n++ {
		s = append(s, n)
	}
	return append(s, 95, 127, 128, 129, 191, 255, 256, 257, 384, 768, 1023, 1031)
}()

// lnInput returns an m×n matrix with leading dimension ld (padding NaN,
// so a kernel that reads it is caught) whose rows have a mean far from 0
// relative to their spread, as a residual stream has, and gamma and beta.
func lnInput(seed uint64, m, n, ld int) (x, gamma, beta []float32) {
	r := newRand(seed)
	x = make([]float32, (m-1)*ld+n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	for i := 0; i < m; i++ {
		off := r.Float32()*8 - 4
		for j := 0; j < n; j++ {
			x[i*ld+j] = off + r.Float32()*2 - 1
		}
	}
	return x, randSlice(r, n), randSlice(r, n)
}

// lnRef is LayerNorm in float64: y, mean and rstd of every row.
func lnRef(m, n int, x []float32, ld int, gamma, beta []float32, eps float64) (y, mean, rstd []float64) {
	y = make([]float64, m*n)
	mean, rstd = make([]float64, m), make([]float64, m)
	for i := 0; i < m; i++ {
		var s float64
		for j := 0; j < n; j++ {
			s += float64(x[i*ld+j])
		}
		mu := s / float64(n)
		var ss float64
		for j := 0; j < n; j++ {
			d := float64(x[i*ld+j]) - mu
			ss += d * d
		}
		r := 1 / math.Sqrt(ss/float64(n)+eps)
		mean[i], rstd[i] = mu, r
		for j := 0; j < n; j++ {
			y[i*n+j] = (float64(x[i*ld+j])-mu)*r*float64(gamma[j]) + float64(beta[j])
		}
	}
	return y, mean, rstd
}

// TestLayerNormSweep checks every implementation against a float64
// reference over every row length of layerNormCols, padded leading
// dimensions and unaligned starts: each output within 4e-6·g of the
// reference relative to |gamma[j]|·max|xhat| + |beta[j]|, mean within
// 4e-7·g of the row's largest magnitude, where g = max(1, n/64) allows
// for generic's sequential sums, and rstd within 2e-6 relative.
func TestLayerNormSweep(t *testing.T) {
	const eps = 1e-5
	forEachImpl(t, func(t *testing.T, p *Impl) {
		var worstY, worstR float64
		for _, n := range layerNormCols {
			for _, c := range []struct{ m, pad, off int }{{1, 0, 0}, {3, 3, 1}, {2, 17, 5}} {
				ld := n + c.pad
				x0, gamma, beta := lnInput(uint64(n*31+c.m), c.m, n, ld)
				want, wantMean, wantRstd := lnRef(c.m, n, x0, ld, gamma, beta, float64(float32(eps)))
				x := offsetCopy(x0, c.off)
				y := offsetCopy(make([]float32, (c.m-1)*ld+n), (c.off+3)%8)
				mean, rstd := make([]float32, c.m), make([]float32, c.m)
				p.LayerNorm(c.m, n, x, ld, gamma, beta, eps, y, ld, mean, rstd)
				for i := 0; i < c.m; i++ {
					var scale, maxXh float64
					for j := 0; j < n; j++ {
						scale = math.Max(scale, math.Abs(float64(x0[i*ld+j])))
						maxXh = math.Max(maxXh, math.Abs((float64(x0[i*ld+j])-wantMean[i])*wantRstd[i]))
					}
					// generic sums sequentially: its error grows with n.
					growth := math.Max(1, float64(n)/64)
					if d := math.Abs(float64(mean[i]) - wantMean[i]); d > 4e-7*scale*growth {
						t.Fatalf("n=%d m=%d row %d: mean %v, want %v", n, c.m, i, mean[i], wantMean[i])
					}
					dr := math.Abs(float64(rstd[i])-wantRstd[i]) / wantRstd[i]
					worstR = math.Max(worstR, dr)
					if dr > 2e-6 {
						t.Fatalf("n=%d m=%d row %d: rstd %v, want %v (relative error %.2g)", n, c.m, i, rstd[i], wantRstd[i], dr)
					}
					for j := 0; j < n; j++ {
						got, w := float64(y[i*ld+j]), want[i*n+j]
						bound := math.Abs(float64(gamma[j]))*maxXh + math.Abs(float64(beta[j]))
						e := math.Abs(got-w) / bound
						worstY = math.Max(worstY, e)
						if e > 4e-6*growth {
							t.Fatalf("n=%d m=%d: y[%d,%d] = %v, want %v (error %.2g of the scale)", n, c.m, i, j, got, w, e)
						}
					}
					if i+1 < c.m {
						for j := n; j < ld; j++ {
							if y[i*ld+j] != 0 {
								t.Fatalf("n=%d: padding y[%d,%d] written", n, i, j)
							}
						}
					}
				}
			}
		}
		t.Logf("largest error: y %.3g of the scale, rstd %.3g relative", worstY, worstR)
	})
}

// TestLayerNormInPlace checks y = x (in place) and nil mean and rstd
// against a separate output with saved statistics, bit for bit.
func TestLayerNormInPlace(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{1, 7, 16, 33, 100} {
			x, gamma, beta := lnInput(uint64(n), 4, n, n)
			y := make([]float32, len(x))
			mean, rstd := make([]float32, 4), make([]float32, 4)
			p.LayerNorm(4, n, x, n, gamma, beta, 1e-5, y, n, mean, rstd)
			p.LayerNorm(4, n, x, n, gamma, beta, 1e-5, x, n, nil, nil)
			for i := range x {
				if x[i] != y[i] {
					t.Fatalf("n=%d: in place x[%d] = %v, separately %v", n, i, x[i], y[i])
				}
			}
		}
	})
}

// TestLayerNormSpecial checks the defined results: a constant row gives
// y = beta exactly (its deviations are 0) and rstd = 1/sqrt(eps); a NaN
// or infinite element makes its whole row NaN and leaves other rows
// alone.
func TestLayerNormSpecial(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{1, 5, 16, 37, 64, 70} {
			x, gamma, beta := lnInput(9, 3, n, n)
			for j := 0; j < n; j++ {
				x[j] = 2.5
			}
			x[n+n/2] = float32(math.NaN())
			x[2*n+n/3] = float32(math.Inf(1))
			y := make([]float32, 3*n)
			mean, rstd := make([]float32, 3), make([]float32, 3)
			p.LayerNorm(3, n, x, n, gamma, beta, 1e-4, y, n, mean, rstd)
			if mean[0] != 2.5 || math.Abs(float64(rstd[0])-100) > 1e-4 {
				t.Errorf("n=%d constant row: mean %v rstd %v, want 2.5 and 100", n, mean[0], rstd[0])
			}
			for j := 0; j < n; j++ {
				if y[j] != beta[j] {
					t.Fatalf("n=%d constant row: y[%d] = %v, want beta %v", n, j, y[j], beta[j])
				}
				if !math.IsNaN(float64(y[n+j])) || !math.IsNaN(float64(y[2*n+j])) {
					t.Fatalf("n=%d: rows with NaN or Inf give y = %v, %v at %d, want NaN", n, y[n+j], y[2*n+j], j)
				}
			}
		}
	})
}

// lnBackRef is LayerNormBackward in float64 from the float64 statistics.
func lnBackRef(m, n int, dy, x []float32, gamma []float32, mean, rstd []float64) (dx, dgamma, dbeta []float64) {
	dx, dgamma, dbeta = make([]float64, m*n), make([]float64, n), make([]float64, n)
	for i := 0; i < m; i++ {
		var sd, sdx float64
		for j := 0; j < n; j++ {
			xh := (float64(x[i*n+j]) - mean[i]) * rstd[i]
			dn := float64(dy[i*n+j]) * float64(gamma[j])
			sd += dn
			sdx += dn * xh
			dgamma[j] += float64(dy[i*n+j]) * xh
			dbeta[j] += float64(dy[i*n+j])
		}
		sd /= float64(n)
		sdx /= float64(n)
		for j := 0; j < n; j++ {
			xh := (float64(x[i*n+j]) - mean[i]) * rstd[i]
			dx[i*n+j] = rstd[i] * (float64(dy[i*n+j])*float64(gamma[j]) - sd - xh*sdx)
		}
	}
	return dx, dgamma, dbeta
}

// TestLayerNormBackwardSweep checks the gradients of every implementation
// against float64 (with the float64 mean and rstd rounded to float32, as
// a forward pass saves them), added into nonzero starting values: dx
// within 1e-5 of rstd·(max|dn| + max|dn·xhat|)·(1 + max|xhat|), dgamma and
// dbeta within 1e-5 of m times their terms' scale.
func TestLayerNormBackwardSweep(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range layerNormCols {
			const m = 3
			x, gamma, _ := lnInput(uint64(n)+77, m, n, n)
			r := newRand(uint64(n))
			dy := randSlice(r, m*n)
			_, mean64, rstd64 := lnRef(m, n, x, n, gamma, gamma, 1e-5)
			mean, rstd := make([]float32, m), make([]float32, m)
			for i := range mean {
				mean[i], rstd[i] = float32(mean64[i]), float32(rstd64[i])
				mean64[i], rstd64[i] = float64(mean[i]), float64(rstd[i])
			}
			dx0, dg0, db0 := randSlice(r, m*n), randSlice(r, n), randSlice(r, n)
			dx, dg, db := offsetCopy(dx0, 3), offsetCopy(dg0, 1), offsetCopy(db0, 2)
			p.LayerNormBackward(m, n, dy, n, offsetCopy(x, 5), n, mean, rstd, gamma, dx, n, dg, db)
			wdx, wdg, wdb := lnBackRef(m, n, dy, x, gamma, mean64, rstd64)
			var maxXh float64
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					maxXh = math.Max(maxXh, math.Abs((float64(x[i*n+j])-mean64[i])*rstd64[i]))
				}
			}
			for i := range dx {
				bound := 1e-5 * rstd64[i/n] * (1 + maxXh) * (1 + maxXh)
				if d := math.Abs(float64(dx[i]) - (float64(dx0[i]) + wdx[i])); d > bound+2*float32Eps*math.Abs(float64(dx0[i])) {
					t.Fatalf("n=%d: dx[%d] = %v, want %v + %v", n, i, dx[i], dx0[i], wdx[i])
				}
			}
			for j := 0; j < n; j++ {
				if d := math.Abs(float64(dg[j]) - (float64(dg0[j]) + wdg[j])); d > 1e-5*m*(1+maxXh) {
					t.Fatalf("n=%d: dgamma[%d] = %v, want %v + %v", n, j, dg[j], dg0[j], wdg[j])
				}
				if d := math.Abs(float64(db[j]) - (float64(db0[j]) + wdb[j])); d > 1e-5*m {
					t.Fatalf("n=%d: dbeta[%d] = %v, want %v + %v", n, j, db[j], db0[j], wdb[j])
				}
			}
		}
	})
}

// TestLayerNormBackwardMatchesGeneric checks dbeta bit for bit (plain
// sums in row order, the same everywhere) and dx, dgamma closely against
// generic, with leading dimensions larger than the rows.
func TestLayerNormBackwardMatchesGeneric(t *testing.T) {
	for _, p := range nonGeneric() {
		t.Run(p.Name(), func(t *testing.T) {
			for _, n := range []int{1, 3, 8, 15, 16, 17, 63, 64, 65, 200} {
				const m, pad = 4, 3
				ld := n + pad
				x, gamma, beta := lnInput(uint64(n), m, n, ld)
				mean, rstd := make([]float32, m), make([]float32, m)
				y := make([]float32, len(x))
				genericImpl.LayerNorm(m, n, x, ld, gamma, beta, 1e-5, y, ld, mean, rstd)
				dy := randSlice(newRand(uint64(n)+5), len(x))
				dxG, dxP := make([]float32, len(x)), make([]float32, len(x))
				dgG, dgP, dbG, dbP := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
				genericImpl.LayerNormBackward(m, n, dy, ld, x, ld, mean, rstd, gamma, dxG, ld, dgG, dbG)
				p.LayerNormBackward(m, n, dy, ld, x, ld, mean, rstd, gamma, dxP, ld, dgP, dbP)
				for j := 0; j < n; j++ {
					if dbG[j] != dbP[j] {
						t.Fatalf("n=%d: dbeta[%d] = %v, generic %v", n, j, dbP[j], dbG[j])
					}
					if !closeTo(dgP[j], dgG[j], 1e-5*m*8) {
						t.Fatalf("n=%d: dgamma[%d] = %v, generic %v", n, j, dgP[j], dgG[j])
					}
				}
				for i := range dxG {
					if !closeTo(dxP[i], dxG[i], 1e-4) {
						t.Fatalf("n=%d: dx[%d] = %v, generic %v", n, i, dxP[i], dxG[i])
					}
					if i%ld >= n && dxP[i] != 0 {
						t.Fatalf("n=%d: padding dx[%d] written", n, i)
					}
				}
			}
		})
	}
}

// TestLayerNormPanics checks that bad arguments panic in Go naming the
// function, the argument and the numbers, on every implementation.
func TestLayerNormPanics(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		x, g, b := make([]float32, 12), make([]float32, 4), make([]float32, 4)
		y, st := make([]float32, 12), make([]float32, 3)
		const huge = math.MaxInt/2 + 13 // (3-1)*huge wraps around
		cases := []struct {
			name string
			call func()
			want string
		}{
			{"negative m", func() { p.LayerNorm(-1, 4, x, 4, g, b, 1e-5, y, 4, nil, nil) }, "LayerNorm: m = -1"},
			{"short x", func() { p.LayerNorm(4, 4, x, 4, g, b, 1e-5, y, 4, nil, nil) }, "LayerNorm: len(x) = 12, want >= 16"},
			{"small ldy", func() { p.LayerNorm(3, 4, x, 4, g, b, 1e-5, y, 3, nil, nil) }, "LayerNorm: ldy = 3"},
			{"huge ldy", func() { p.LayerNorm(3, 4, x, 4, g, b, 1e-5, y, huge, nil, nil) }, "LayerNorm: len(y) = 12"},
			{"short gamma", func() { p.LayerNorm(2, 5, x, 5, g, b, 1e-5, y, 5, nil, nil) }, "LayerNorm: len(gamma) = 4, want >= 5"},
			{"short mean", func() { p.LayerNorm(3, 4, x, 4, g, b, 1e-5, y, 4, st[:2], st) }, "LayerNorm: len(mean) = 2, want >= 3"},
			{"shifted in place", func() { p.LayerNorm(2, 4, x, 4, g, b, 1e-5, x[1:], 4, nil, nil) }, "LayerNorm: y overlaps x"},
			{"backward short dbeta", func() { p.LayerNormBackward(3, 4, y, 4, x, 4, st, st, g, make([]float32, 12), 4, g, b[:3]) }, "LayerNormBackward: len(dbeta) = 3"},
			{"backward nil mean", func() { p.LayerNormBackward(3, 4, y, 4, x, 4, nil, st, g, make([]float32, 12), 4, g, b) }, "LayerNormBackward: len(mean) = 0"},
			{"backward dx is dy", func() { p.LayerNormBackward(3, 4, y, 4, x, 4, st, st, g, y, 4, g, b) }, "LayerNormBackward: dx overlaps dy"},
			{"backward huge lddx", func() { p.LayerNormBackward(3, 4, y, 4, x, 4, st, st, g, make([]float32, 12), huge, g, b) }, "LayerNormBackward: len(dx) = 12"},
			{"backward dgamma is dbeta", func() { p.LayerNormBackward(3, 4, y, 4, x, 4, st, st, g, make([]float32, 12), 4, b, b) }, "LayerNormBackward: dgamma overlaps dbeta"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if msg := panicMessage(tc.call); !strings.Contains(msg, "kernels."+tc.want) {
					t.Errorf("panic %q, want it to contain %q", msg, "kernels."+tc.want)
				}
			})
		}
	})
}

// TestLayerNormAllocs checks that neither kernel allocates.
func TestLayerNormAllocs(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		const m, n = 8, 100
		x, g, b := lnInput(1, m, n, n)
		y, dx := make([]float32, m*n), make([]float32, m*n)
		mean, rstd, dg, db := make([]float32, m), make([]float32, m), make([]float32, n), make([]float32, n)
		if a := testing.AllocsPerRun(20, func() {
			p.LayerNorm(m, n, x, n, g, b, 1e-5, y, n, mean, rstd)
			p.LayerNormBackward(m, n, y, n, x, n, mean, rstd, g, dx, n, dg, db)
		}); a != 0 {
			t.Errorf("%v allocations per call", a)
		}
	})
}
