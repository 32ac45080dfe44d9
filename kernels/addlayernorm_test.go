package kernels

import (
	"math"
	"strings"
	"testing"
)

// TestAddLayerNormMatchesUnfused checks, on every implementation, that
// AddLayerNorm gives bitwise what Add followed by LayerNorm gives, over
// row lengths crossing every vector width and unroll of the row kernels,
// padded leading dimensions, unaligned starts, with and without the saved
// statistics, in each in-place form it allows (sum = x, sum = r, y =
// sum), and over more rows than one chunk. Padding between rows must stay untouched.
func TestAddLayerNormMatchesUnfused(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, 384, 1031} {
			for _, tc := range []struct {
				name       string
				m, pad     int
				sumIs, yIs string // "" (apart), "x", "r"; "" or "sum"
				stats      bool
			}{
				{"apart", 1, 0, "", "", true},
				{"padded rows", 3, 5, "", "", true},
				{"no stats", 2, 3, "", "", false},
				{"sum is x", 3, 1, "x", "", true},
				{"sum is r", 2, 0, "r", "", true},
				{"y is sum", 3, 2, "", "sum", true},
				// More rows than one chunk of addLNChunkFloats, rows
				// contiguous (one Add per chunk) and padded.
				{"chunks", 40, 0, "", "", true},
				{"chunks padded", 37, 3, "x", "", true},
				{"chunks in place", 33, 0, "r", "sum", false},
			} {
				ld := n + tc.pad
				r := newRand(uint64(n*31 + tc.m))
				x, gamma, beta := lnInput(uint64(n), tc.m, n, ld)
				res := make([]float32, len(x))
				for i := range res {
					res[i] = r.Float32()*2 - 1
				}
				x, res = offsetCopy(x, 3), offsetCopy(res, 5)
				// The unfused reference: Add row by row (only the rows'
				// elements), then LayerNorm.
				wantSum := make([]float32, len(x))
				for i := range wantSum {
					wantSum[i] = float32(math.Inf(1)) // padding marker
				}
				for i := 0; i < tc.m; i++ {
					p.Add(wantSum[i*ld:i*ld+n], x[i*ld:i*ld+n], res[i*ld:i*ld+n])
				}
				wantY := make([]float32, len(x))
				for i := range wantY {
					wantY[i] = float32(math.Inf(1))
				}
				wantMean, wantRstd := make([]float32, tc.m), make([]float32, tc.m)
				p.LayerNorm(tc.m, n, wantSum, ld, gamma, beta, 1e-5, wantY, ld, wantMean, wantRstd)

				xs, rs := append([]float32(nil), x...), append([]float32(nil), res...)
				sum := offsetCopy(wantSum, 1)
				for i := 0; i < tc.m; i++ {
					clear(sum[i*ld : i*ld+n])
				}
				switch tc.sumIs {
				case "x":
					sum = xs
				case "r":
					sum = rs
				}
				y := offsetCopy(wantY, 7)
				for i := 0; i < tc.m; i++ {
					clear(y[i*ld : i*ld+n])
				}
				if tc.yIs == "sum" {
					y = sum
					wantY = append([]float32(nil), wantY...)
					// y overwrote the sum's rows; its padding is the sum's.
					for i := range wantY {
						if i%ld >= n || i/ld >= tc.m {
							wantY[i] = wantSum[i]
							if tc.sumIs != "" {
								wantY[i] = x[i]
							}
						}
					}
				}
				var mean, rstd []float32
				if tc.stats {
					mean, rstd = make([]float32, tc.m), make([]float32, tc.m)
				}
				p.AddLayerNorm(tc.m, n, xs, ld, rs, ld, sum, ld, gamma, beta, 1e-5, y, ld, mean, rstd)

				same := func(what string, got, want []float32) {
					t.Helper()
					for i := range want {
						if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
							t.Fatalf("n=%d %s: %s[%d] = %v, want %v", n, tc.name, what, i, got[i], want[i])
						}
					}
				}
				same("y", y, wantY)
				if tc.yIs == "" {
					if tc.sumIs == "" {
						same("sum", sum, wantSum)
					} else {
						// Only the rows were written: compare them.
						for i := 0; i < tc.m; i++ {
							same("sum row", sum[i*ld:i*ld+n], wantSum[i*ld:i*ld+n])
						}
					}
				}
				if tc.stats {
					same("mean", mean, wantMean)
					same("rstd", rstd, wantRstd)
				}
			}
		}
	})
}

// TestAddLayerNormPanics checks that bad arguments panic in Go naming the
// function, the argument and the numbers, on every implementation.
func TestAddLayerNormPanics(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		x, r, g, b := make([]float32, 12), make([]float32, 12), make([]float32, 4), make([]float32, 4)
		s, y, st := make([]float32, 12), make([]float32, 12), make([]float32, 3)
		const huge = math.MaxInt/2 + 13 // (3-1)*huge wraps around
		cases := []struct {
			name string
			call func()
			want string
		}{
			{"negative n", func() { p.AddLayerNorm(3, -4, x, 4, r, 4, s, 4, g, b, 1e-5, y, 4, nil, nil) }, "AddLayerNorm: n = -4"},
			{"short r", func() { p.AddLayerNorm(3, 4, x, 4, r[:11], 4, s, 4, g, b, 1e-5, y, 4, nil, nil) }, "AddLayerNorm: len(r) = 11, want >= 12"},
			{"small ldsum", func() { p.AddLayerNorm(3, 4, x, 4, r, 4, s, 3, g, b, 1e-5, y, 4, nil, nil) }, "AddLayerNorm: ldsum = 3"},
			{"huge ldx", func() { p.AddLayerNorm(3, 4, x, huge, r, 4, s, 4, g, b, 1e-5, y, 4, nil, nil) }, "AddLayerNorm: len(x) = 12"},
			{"huge ldy", func() { p.AddLayerNorm(3, 4, x, 4, r, 4, s, 4, g, b, 1e-5, y, huge, nil, nil) }, "AddLayerNorm: len(y) = 12"},
			{"short beta", func() { p.AddLayerNorm(2, 5, x, 5, r, 5, s, 5, g, g, 1e-5, y, 5, nil, nil) }, "AddLayerNorm: len(gamma) = 4, want >= 5"},
			{"short rstd", func() { p.AddLayerNorm(3, 4, x, 4, r, 4, s, 4, g, b, 1e-5, y, 4, st, st[:1]) }, "AddLayerNorm: len(rstd) = 1, want >= 3"},
			{"sum shifted over x", func() { p.AddLayerNorm(2, 4, x, 4, r, 4, x[1:], 4, g, b, 1e-5, y, 4, nil, nil) }, "AddLayerNorm: sum overlaps x"},
			{"sum over r, other ld", func() { p.AddLayerNorm(2, 4, x, 4, r, 4, r, 5, g, b, 1e-5, y, 4, nil, nil) }, "AddLayerNorm: sum overlaps r"},
			{"y is x", func() { p.AddLayerNorm(3, 4, x, 4, r, 4, s, 4, g, b, 1e-5, x, 4, nil, nil) }, "AddLayerNorm: y overlaps x"},
			{"y is r", func() { p.AddLayerNorm(3, 4, x, 4, r, 4, s, 4, g, b, 1e-5, r, 4, nil, nil) }, "AddLayerNorm: y overlaps r"},
			{"y shifted over sum", func() { p.AddLayerNorm(2, 4, x, 4, r, 4, s, 4, g, b, 1e-5, s[2:], 4, nil, nil) }, "AddLayerNorm: y overlaps sum"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if msg := panicMessage(tc.call); !strings.Contains(msg, "kernels."+tc.want) {
					t.Errorf("panic %q, want it to contain %q", msg, "kernels."+tc.want)
				}
			})
		}
		// Zero rows or columns do nothing, whatever the leading dimensions.
		p.AddLayerNorm(0, 4, nil, 4, nil, 4, nil, 4, g, b, 1e-5, nil, 4, nil, nil)
		p.AddLayerNorm(3, 0, nil, 0, nil, 0, nil, 0, nil, nil, 1e-5, nil, 0, st, st)
	})
}

// TestAddLayerNormAllocs checks that AddLayerNorm does not allocate.
func TestAddLayerNormAllocs(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		const m, n = 8, 100
		x, g, b := lnInput(1, m, n, n)
		r, s, y := make([]float32, m*n), make([]float32, m*n), make([]float32, m*n)
		mean, rstd := make([]float32, m), make([]float32, m)
		if a := testing.AllocsPerRun(20, func() {
			p.AddLayerNorm(m, n, x, n, r, n, s, n, g, b, 1e-5, y, n, mean, rstd)
		}); a != 0 {
			t.Errorf("%v allocations per call", a)
		}
	})
}
