package bench

import "github.com/simdgpt/simdgpt/kernels"

// layerNormShapes are the LayerNorm problems of the trainer: rows × width
// of TinyGPT's configurations (a) 12×64 rows of 128 and (b) 8×256 rows of
// 384, and GPT-2 small's 4×64 rows of 768.
var layerNormShapes = []Shape{
	{Name: "768x128", M: 768, N: 128},
	{Name: "2048x384", M: 2048, N: 384},
	{Name: "256x768", M: 256, N: 768},
}

// lnInput returns an m×n input with row means away from 0, and gamma and
// beta.
func lnInput(m, n int) (x, gamma, beta []float32) {
	r := newRand(11)
	x = randSlice(r, m*n, 1)
	for i := 0; i < m; i++ {
		off := float32(i%7) - 3
		for j := 0; j < n; j++ {
			x[i*n+j] += off
		}
	}
	return x, randSlice(r, n, 1), randSlice(r, n, 1)
}

func layerNormKernel() *Kernel {
	return &Kernel{
		Name:   "layernorm",
		Doc:    "y = (x-mean)·rstd·γ + β per row of an M×N matrix, saving mean and rstd",
		Bound:  MemoryBound,
		Shapes: layerNormShapes,
		Short:  "768x128",
		has:    func(im *Impl) bool { return im.LayerNorm != nil },
		work: func(s Shape) Work {
			e := float64(s.M) * float64(s.N)
			// sum; squared deviations; subtract, scale, FMA: 6 per element.
			// x is read three times (from cache after the first), y written.
			return Work{Flops: 6 * e, Bytes: 8*e + 8*float64(s.N)}
		},
		setup: func(s Shape, im *Impl) func() {
			x, gamma, beta := lnInput(s.M, s.N)
			y := make([]float32, len(x))
			mean, rstd := make([]float32, s.M), make([]float32, s.M)
			f := im.LayerNorm
			return func() { f(s.M, s.N, x, s.N, gamma, beta, 1e-5, y, s.N, mean, rstd) }
		},
	}
}

func layerNormBackwardKernel() *Kernel {
	return &Kernel{
		Name:   "layernormbackward",
		Doc:    "dx += LayerNorm's input gradient, dγ and dβ accumulated, M×N",
		Bound:  MemoryBound,
		Shapes: layerNormShapes,
		Short:  "768x128",
		has:    func(im *Impl) bool { return im.LayerNormBackward != nil },
		work: func(s Shape) Work {
			e := float64(s.M) * float64(s.N)
			// Pass 1: 9 operations, pass 2: 7, per element; dy and x read,
			// dx read and written (dγ, dβ stay in cache).
			return Work{Flops: 16 * e, Bytes: 16 * e}
		},
		setup: func(s Shape, im *Impl) func() {
			x, gamma, beta := lnInput(s.M, s.N)
			y := make([]float32, len(x))
			mean, rstd := make([]float32, s.M), make([]float32, s.M)
			kernels.LayerNorm(s.M, s.N, x, s.N, gamma, beta, 1e-5, y, s.N, mean, rstd)
			dy := randSlice(newRand(12), len(x), 1)
			dx := make([]float32, len(x))
			dg, db := make([]float32, s.N), make([]float32, s.N)
			f := im.LayerNormBackward
			return func() {
				// dx, dγ and dβ accumulate; they stay bounded because dy
				// has mean about 0 and the benchmark runs at most a few
				// thousand calls.
				f(s.M, s.N, dy, s.N, x, s.N, mean, rstd, gamma, dx, s.N, dg, db)
			}
		},
	}
}
