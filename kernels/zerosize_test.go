//go:build unix

package kernels

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/guard"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// zeroArgs makes the inputs of one zero-size call: every slice is nil
// when it holds nothing and otherwise exactly as long as the call needs,
// its last element flush against an unmapped page (guard), so that a
// kernel touching memory past it faults.
type zeroArgs struct {
	bufs []*guard.Buffer
	seed float32
}

// vec returns n elements (nil when n is 0) of distinct values in [-1, 1].
func (z *zeroArgs) vec(n int) []float32 {
	if n == 0 {
		return nil
	}
	s, b := guard.Alloc(n, guard.End)
	z.bufs = append(z.bufs, b)
	for i := range s {
		z.seed++
		s[i] = float32(math.Sin(float64(z.seed)))
	}
	return s
}

// mat returns the shortest slice holding a rows×cols matrix with leading
// dimension ld: (rows-1)*ld + cols elements, nil when it is empty.
func (z *zeroArgs) mat(rows, cols, ld int) []float32 {
	if rows == 0 || cols == 0 {
		return nil
	}
	return z.vec((rows-1)*ld + cols)
}

func (z *zeroArgs) free() {
	for _, b := range z.bufs {
		b.Free()
	}
}

// zeroCase is one call with a zero size: run calls the kernel on p and
// returns its outputs (slices, and scalar results as one-element
// slices) and the values they (or other inputs) held before the call;
// want, when not nil, returns what the outputs must be (nil for one it
// does not state), from before and the outputs. The outputs up to
// len(generic) are compared with generic's.
type zeroCase struct {
	desc    string
	run     func(p *Impl, z *zeroArgs) (before, after [][]float32)
	want    func(before, after [][]float32) [][]float32
	generic int
}

// dims3 returns the (m, n, k) with at least one of them 0 and m >= 2
// otherwise: every size zero alone, in pairs and together.
func dims3() [][3]int {
	var out [][3]int
	for _, m := range []int{0, 2} {
		for _, n := range []int{0, 2} {
			for _, k := range []int{0, 5} {
				if m == 0 || n == 0 || k == 0 {
					out = append(out, [3]int{m, n, k})
				}
			}
		}
	}
	return out
}

// dims2 is dims3 for two sizes.
func dims2() [][2]int { return [][2]int{{0, 0}, {0, 4}, {2, 0}} }

// ld is the smallest leading dimension the kernels accept for rows of
// cols elements.
func ld(cols int) int { return max(cols, 1) }

func clone(s []float32) []float32 { return append([]float32(nil), s...) }

// scaled returns beta*c, 0 for every element when beta is 0.
func scaled(beta float32, c []float32) []float32 {
	out := make([]float32, len(c))
	for i, v := range c {
		if beta != 0 {
			out[i] = beta * v
		}
	}
	return out
}

// rowsOf returns m rows of bias as an m×n matrix of leading dimension ldc
// over a buffer of want's length, the rest of it kept from c.
func rowsOf(c []float32, m, n, ldc int, f func(j int) float32) []float32 {
	out := clone(c)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			out[i*ldc+j] = f(j)
		}
	}
	return out
}

// zeroCases returns, for every kernel of the package's API, its calls
// with zero sizes.
func zeroCases() map[string][]zeroCase {
	cases := map[string][]zeroCase{}
	add := func(name string, c zeroCase) { cases[name] = append(cases[name], c) }
	one := func(v float32) []float32 { return []float32{v} }
	one64 := func(v float64) []float32 { return []float32{float32(v)} }
	adam := AdamWParams{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, GradScale: 1, InvBiasCorr1: 10, InvBiasCorr2: 20}

	for _, d := range dims3() {
		m, n, k := d[0], d[1], d[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			tA, tB := tr[0], tr[1]
			ar, ac := opShape(tA, m, k)
			br, bc := opShape(tB, k, n)
			desc := fmt.Sprintf("m=%d n=%d k=%d transA=%v transB=%v", m, n, k, tA, tB)
			for _, beta := range []float32{0, 2} {
				add("Gemm", zeroCase{desc: fmt.Sprintf("%s beta=%v", desc, beta),
					run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
						a, b, c := z.mat(ar, ac, ac), z.mat(br, bc, bc), z.mat(m, n, n)
						c0 := clone(c)
						p.Gemm(tA, tB, m, n, k, 0.5, a, ac, b, bc, beta, c, n)
						return [][]float32{c0}, [][]float32{c}
					},
					want: func(b, _ [][]float32) [][]float32 { return [][]float32{scaled(beta, b[0])} },
				})
				add("GemmBF16Compute", zeroCase{desc: fmt.Sprintf("%s beta=%v", desc, beta),
					run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
						a, b, c := z.mat(ar, ac, ac), z.mat(br, bc, bc), z.mat(m, n, n)
						c0 := clone(c)
						p.GemmBF16Compute(tA, tB, m, n, k, 0.5, a, ac, b, bc, beta, c, n)
						return [][]float32{c0}, [][]float32{c}
					},
					want: func(b, _ [][]float32) [][]float32 { return [][]float32{scaled(beta, b[0])} },
				})
			}
			add("GemmBiasBF16Compute", zeroCase{desc: desc,
				run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
					a, b, bias, c := z.mat(ar, ac, ac), z.mat(br, bc, bc), z.vec(n), z.mat(m, n, n)
					b0 := [][]float32{clone(bias), clone(c)}
					p.GemmBiasBF16Compute(tA, tB, m, n, k, a, ac, b, bc, bias, c, n)
					return b0, [][]float32{c}
				},
				want: func(b, _ [][]float32) [][]float32 {
					return [][]float32{rowsOf(b[1], m, n, n, func(j int) float32 { return b[0][j] })}
				},
			})
			add("GemmBiasGELUBF16Compute", zeroCase{desc: desc,
				run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
					a, b, bias, pre, out := z.mat(ar, ac, ac), z.mat(br, bc, bc), z.vec(n), z.mat(m, n, n), z.mat(m, n, n)
					b0 := [][]float32{clone(bias), clone(pre)}
					p.GemmBiasGELUBF16Compute(tA, tB, m, n, k, a, ac, b, bc, bias, pre, n, out, n)
					g := make([]float32, len(pre))
					p.GELU(g, pre)
					return b0, [][]float32{pre, out, g}
				},
				want: func(b, a [][]float32) [][]float32 {
					pre := rowsOf(b[1], m, n, n, func(j int) float32 { return b[0][j] })
					return [][]float32{pre, a[2]}
				},
				generic: 1,
			})
			add("GemmBias", zeroCase{desc: desc,
				run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
					a, b, bias, c := z.mat(ar, ac, ac), z.mat(br, bc, bc), z.vec(n), z.mat(m, n, n)
					b0 := [][]float32{clone(bias), clone(c)}
					p.GemmBias(tA, tB, m, n, k, a, ac, b, bc, bias, c, n)
					return b0, [][]float32{c}
				},
				want: func(b, _ [][]float32) [][]float32 {
					return [][]float32{rowsOf(b[1], m, n, n, func(j int) float32 { return b[0][j] })}
				},
			})
			add("GemmBiasGELU", zeroCase{desc: desc,
				run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
					a, b, bias, pre, out := z.mat(ar, ac, ac), z.mat(br, bc, bc), z.vec(n), z.mat(m, n, n), z.mat(m, n, n)
					b0 := [][]float32{clone(bias), clone(pre)}
					p.GemmBiasGELU(tA, tB, m, n, k, a, ac, b, bc, bias, pre, n, out, n)
					g := make([]float32, len(pre))
					p.GELU(g, pre)
					return b0, [][]float32{pre, out, g}
				},
				// out is the implementation's own GELU of pre (GELU is
				// not bitwise the same across implementations).
				want: func(b, a [][]float32) [][]float32 {
					pre := rowsOf(b[1], m, n, n, func(j int) float32 { return b[0][j] })
					return [][]float32{pre, a[2]}
				},
				generic: 1,
			})
		}
		add("MatMul", zeroCase{desc: fmt.Sprintf("m=%d n=%d k=%d", m, n, k),
			run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				a, b, c := z.mat(m, k, k), z.mat(k, n, n), z.mat(m, n, n)
				c0 := clone(c)
				p.MatMul(m, n, k, a, b, c)
				return [][]float32{c0}, [][]float32{c}
			},
			want: func(b, _ [][]float32) [][]float32 { return [][]float32{scaled(0, b[0])} },
		})
		// MaskedScores: tq, tk, d.
		tq, tk, dd := d[0], d[1], d[2]
		add("MaskedScores", zeroCase{desc: fmt.Sprintf("tq=%d tk=%d d=%d", tq, tk, dd),
			run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				q, kk, s := z.mat(tq, dd, ld(dd)), z.mat(tk, dd, ld(dd)), z.mat(tq, tk, ld(tk))
				p.MaskedScores(tq, tk, dd, 0.5, q, ld(dd), kk, ld(dd), tk-tq, s, ld(tk))
				return nil, [][]float32{s}
			},
		})
	}

	for _, d := range dims2() {
		m, n := d[0], d[1]
		desc := fmt.Sprintf("m=%d n=%d", m, n)
		for _, tr := range []bool{false, true} {
			xl, yl := n, m
			if tr {
				xl, yl = m, n
			}
			for _, beta := range []float32{0, 2} {
				add("Gemv", zeroCase{desc: fmt.Sprintf("%s trans=%v beta=%v", desc, tr, beta),
					run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
						a, x, y := z.mat(m, n, ld(n)), z.vec(xl), z.vec(yl)
						y0 := clone(y)
						p.Gemv(tr, m, n, 0.5, a, ld(n), x, beta, y)
						return [][]float32{y0}, [][]float32{y}
					},
					want: func(b, _ [][]float32) [][]float32 {
						if xl > 0 {
							return [][]float32{b[0]} // y is empty
						}
						return [][]float32{scaled(beta, b[0])}
					},
				})
			}
		}
		add("Softmax", zeroCase{desc: desc, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
			x, y := z.mat(m, n, n), z.mat(m, n, n)
			p.Softmax(m, n, x, n, y, n)
			return nil, [][]float32{y}
		}})
		add("SoftmaxBackward", zeroCase{desc: desc, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
			y, dy, dx := z.mat(m, n, n), z.mat(m, n, n), z.mat(m, n, n)
			p.SoftmaxBackward(m, n, y, n, dy, n, dx, n)
			return nil, [][]float32{dx}
		}})
		add("BiasGELU", zeroCase{desc: desc, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
			x, bias, y := z.mat(m, n, n), z.vec(n), z.mat(m, n, n)
			p.BiasGELU(m, n, x, n, bias, y, n)
			return nil, [][]float32{x, y}
		}})
		for _, stats := range []bool{false, true} {
			sd := fmt.Sprintf("%s mean/rstd=%v", desc, stats)
			add("LayerNorm", zeroCase{desc: sd, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				x, g, b, y := z.mat(m, n, n), z.vec(n), z.vec(n), z.mat(m, n, n)
				var mean, rstd []float32
				if stats {
					mean, rstd = z.vec(m), z.vec(m)
				}
				p.LayerNorm(m, n, x, n, g, b, 1e-5, y, n, mean, rstd)
				return nil, [][]float32{y, mean, rstd}
			}})
			add("AddLayerNorm", zeroCase{desc: sd, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				x, r, sum, g, b, y := z.mat(m, n, n), z.mat(m, n, n), z.mat(m, n, n), z.vec(n), z.vec(n), z.mat(m, n, n)
				var mean, rstd []float32
				if stats {
					mean, rstd = z.vec(m), z.vec(m)
				}
				p.AddLayerNorm(m, n, x, n, r, n, sum, n, g, b, 1e-5, y, n, mean, rstd)
				return nil, [][]float32{sum, y, mean, rstd}
			}})
		}
		add("LayerNormBackward", zeroCase{desc: desc, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
			dy, x, mean, rstd, g, dx, dg, db := z.mat(m, n, n), z.mat(m, n, n), z.vec(m), z.vec(m), z.vec(n), z.mat(m, n, n), z.vec(n), z.vec(n)
			p.LayerNormBackward(m, n, dy, n, x, n, mean, rstd, g, dx, n, dg, db)
			return nil, [][]float32{dx, dg, db}
		}})
		if m == 0 { // m > 0 with n = 0 has no valid target
			add("SoftmaxCrossEntropy", zeroCase{desc: desc, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				logits, dl := z.mat(m, n, n), z.mat(m, n, n)
				p.SoftmaxCrossEntropy(m, n, logits, n, nil, 1, dl, n, nil)
				return nil, [][]float32{dl}
			}})
		}
	}

	// The vector kernels, on empty vectors.
	add("Dot", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { return nil, [][]float32{one(p.Dot(nil, nil))} },
		want: func(_, _ [][]float32) [][]float32 { return [][]float32{one(0)} }})
	add("Sum", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { return nil, [][]float32{one(p.Sum(nil))} },
		want: func(_, _ [][]float32) [][]float32 { return [][]float32{one(0)} }})
	add("Max", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { return nil, [][]float32{one(p.Max(nil))} },
		want: func(_, _ [][]float32) [][]float32 { return [][]float32{one(float32(math.Inf(-1)))} }})
	add("SumSquares", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) {
		return nil, [][]float32{one64(p.SumSquares(nil))}
	}, want: func(_, _ [][]float32) [][]float32 { return [][]float32{one(0)} }})
	add("Axpy", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { p.Axpy(2, nil, nil); return nil, nil }})
	add("Scale", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { p.Scale(2, nil); return nil, nil }})
	add("Add", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { p.Add(nil, nil, nil); return nil, nil }})
	add("GELU", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { p.GELU(nil, nil); return nil, nil }})
	add("GELUBackward", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) { p.GELUBackward(nil, nil, nil); return nil, nil }})
	add("AdamW", zeroCase{run: func(p *Impl, _ *zeroArgs) ([][]float32, [][]float32) {
		p.AdamW(nil, nil, nil, nil, adam)
		return nil, nil
	}})

	// The low-bit products: m, N and K, W's storage nil when empty.
	for _, d := range dims3() {
		m, n, k := d[0], d[1], d[2]*8 // K = 40: a whole group and a partial one
		desc := fmt.Sprintf("m=%d N=%d K=%d", m, n, k)
		for _, beta := range []float32{0, 2} {
			want := func(b, _ [][]float32) [][]float32 { return [][]float32{scaled(beta, b[0])} }
			bf := func() *lowbit.BF16 {
				w := lowbit.NewBF16(n, k)
				if len(w.Data) == 0 {
					w.Data = nil
				}
				return w
			}
			q := func() *lowbit.Int8 {
				w := lowbit.NewInt8(n, k)
				if len(w.Blocks) == 0 {
					w.Blocks = nil
				}
				return w
			}
			bd := fmt.Sprintf("%s beta=%v", desc, beta)
			add("GemmBF16", zeroCase{desc: bd, want: want, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				a, c := z.mat(m, k, ld(k)), z.mat(m, n, ld(n))
				c0 := clone(c)
				p.GemmBF16(m, 0.5, a, ld(k), bf(), beta, c, ld(n))
				return [][]float32{c0}, [][]float32{c}
			}})
			add("GemmBF16ComputeWeights", zeroCase{desc: bd, want: want, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				a, c := z.mat(m, k, ld(k)), z.mat(m, n, ld(n))
				c0 := clone(c)
				p.GemmBF16ComputeWeights(m, 0.5, a, ld(k), bf(), beta, c, ld(n))
				return [][]float32{c0}, [][]float32{c}
			}})
			add("GemmInt8", zeroCase{desc: bd, want: want, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				a, c := z.mat(m, k, ld(k)), z.mat(m, n, ld(n))
				c0 := clone(c)
				p.GemmInt8(m, 0.5, a, ld(k), q(), beta, c, ld(n))
				return [][]float32{c0}, [][]float32{c}
			}})
			add("GemmDequantInt8", zeroCase{desc: bd, want: want, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				a, c := z.mat(m, k, ld(k)), z.mat(m, n, ld(n))
				c0 := clone(c)
				p.GemmDequantInt8(m, 0.5, a, ld(k), q(), beta, c, ld(n))
				return [][]float32{c0}, [][]float32{c}
			}})
			if m == 0 {
				continue // one row: the N and K combinations
			}
			if n > 0 && k > 0 {
				continue
			}
			add("GemvBF16", zeroCase{desc: bd, want: want, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				x, y := z.vec(k), z.vec(n)
				y0 := clone(y)
				p.GemvBF16(0.5, bf(), x, beta, y)
				return [][]float32{y0}, [][]float32{y}
			}})
			add("GemvInt8", zeroCase{desc: bd, want: want, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
				x, y := z.vec(k), z.vec(n)
				y0 := clone(y)
				p.GemvInt8(0.5, q(), x, beta, y)
				return [][]float32{y0}, [][]float32{y}
			}})
		}
		// DequantizeInt8: all N rows of W, then none from its end.
		add("DequantizeInt8", zeroCase{desc: desc, run: func(p *Impl, z *zeroArgs) ([][]float32, [][]float32) {
			d := z.mat(n, k, ld(k))
			p.DequantizeInt8(lowbitZeroInt8(n, k), 0, n, d, ld(k))
			p.DequantizeInt8(lowbitZeroInt8(n, k), n, 0, nil, ld(k))
			return nil, [][]float32{d}
		}})
	}
	return cases
}

// lowbitZeroInt8 returns an n×k Int8 matrix of zeros, its Blocks nil when
// it has none.
func lowbitZeroInt8(n, k int) *lowbit.Int8 {
	w := lowbit.NewInt8(n, k)
	if len(w.Blocks) == 0 {
		w.Blocks = nil
	}
	return w
}

// apiKernels returns the names of the package-level kernel functions of
// api_gen.go, the file kernels/internal/apigen writes from its one list
// of kernels.
func apiKernels(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "api_gen.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
			names = append(names, fd.Name.Name)
		}
	}
	if len(names) == 0 {
		t.Fatal("api_gen.go declares no kernel")
	}
	return names
}

// sameZeroBits reports whether got and want hold the same values, bit for
// bit, any NaN matching any NaN.
func sameZeroBits(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g != g && w != w {
			continue
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			return false
		}
	}
	return true
}

// TestZeroSizes calls every kernel of the package's API (the list
// apigen generates api_gen.go from, read back from that file, so a new
// kernel cannot be left out) with every size that can be 0 at 0, alone
// and together, the others at 2 or more, with nil or minimal slices that
// end at an unmapped page and the smallest leading dimensions the
// kernels accept, on every implementation. No call may panic or touch
// memory outside its slices; the outputs must be what the contract says
// where it says (C = beta*C for a product with K = 0, a bias rows for the
// fused ones, 0 for an empty sum, -Inf for an empty Max), and the same
// bits (any NaN for any NaN) on every implementation as on generic.
func TestZeroSizes(t *testing.T) {
	cases := zeroCases()
	names := apiKernels(t)
	for _, name := range names {
		if len(cases[name]) == 0 {
			t.Errorf("%s: no zero-size case", name)
		}
	}
	var extra []string
	for name := range cases {
		if !slices.Contains(names, name) {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("zero-size cases for %v, which api_gen.go does not declare", extra)
	}
	run := func(p *Impl, tc zeroCase) (before, after [][]float32, msg any) {
		z := &zeroArgs{}
		defer z.free()
		msg = callForPanic(func() {
			before, after = tc.run(p, z)
			// Copy the outputs out of the guarded buffers before they are
			// unmapped.
			for i := range after {
				after[i] = clone(after[i])
			}
		})
		return before, after, msg
	}
	type result struct {
		name string
		tc   zeroCase
		want [][]float32
	}
	var generic []result
	for _, name := range names {
		for _, tc := range cases[name] {
			_, want, msg := run(genericImpl, tc)
			if tc.generic > 0 {
				want = want[:tc.generic]
			}
			if msg != nil {
				t.Errorf("%s %s: generic panics: %v", name, tc.desc, msg)
				continue
			}
			generic = append(generic, result{name, tc, want})
		}
	}
	forEachImpl(t, func(t *testing.T, p *Impl) {
		for _, r := range generic {
			before, got, msg := run(p, r.tc)
			if msg != nil {
				t.Errorf("%s %s: panic: %v", r.name, r.tc.desc, msg)
				continue
			}
			if r.tc.want != nil {
				for i, w := range r.tc.want(before, got) {
					if w != nil && !sameZeroBits(got[i], w) {
						t.Errorf("%s %s: output %d = %v, want %v", r.name, r.tc.desc, i, got[i], w)
					}
				}
			}
			for i := range r.want {
				if !sameZeroBits(got[i], r.want[i]) {
					t.Errorf("%s %s: output %d = %v, generic %v", r.name, r.tc.desc, i, got[i], r.want[i])
				}
			}
		}
	})
}
