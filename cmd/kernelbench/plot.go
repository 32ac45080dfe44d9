package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/simdgpt/simdgpt/bench"
)

// plotSeries returns, for kernel k, one line per implementation: median
// GFLOP/s against size, sorted by size. For GEMM the squares are drawn
// when the run has any (size n of n×n×n), otherwise every shape at the
// cube root of M·N·K; for scores, T (one line per head size would be
// more honest, so only the most common head size, d=64, is drawn when
// present).
func plotSeries(k *bench.Kernel, results []*bench.Result) (names []string, series map[string]plotter.XYs, xlabel string) {
	var rs []*bench.Result
	for _, r := range results {
		if r.Case.Kernel == k {
			rs = append(rs, r)
		}
	}
	keep := func(r *bench.Result) bool { return true }
	xlabel = "size"
	switch k.Name {
	case "gemm":
		xlabel = "∛(M·N·K)"
		for _, r := range rs {
			if s := r.Case.Shape; s.M == s.N && s.N == s.K && !s.TransA && !s.TransB {
				keep = func(r *bench.Result) bool {
					s := r.Case.Shape
					return s.M == s.N && s.N == s.K && !s.TransA && !s.TransB
				}
				xlabel = "matrix size n (n×n times n×n)"
				break
			}
		}
	case "maskedscores":
		xlabel = "sequence length T (causal, one head)"
		for _, r := range rs {
			if r.Case.Shape.K == 64 {
				keep = func(r *bench.Result) bool { return r.Case.Shape.K == 64 }
				xlabel = "sequence length T (causal, one head of size 64)"
				break
			}
		}
	}
	series = map[string]plotter.XYs{}
	for _, r := range rs {
		if !keep(r) {
			continue
		}
		rate, _ := r.Rate()
		if !finite(rate) {
			continue
		}
		name := r.Impl.Name
		if _, ok := series[name]; !ok {
			names = append(names, name)
		}
		series[name] = append(series[name], plotter.XY{X: r.Case.Shape.Size(k), Y: rate})
	}
	for _, xy := range series {
		slices.SortFunc(xy, func(a, b plotter.XY) int {
			if a.X < b.X {
				return -1
			}
			if a.X > b.X {
				return 1
			}
			return 0
		})
	}
	return names, series, xlabel
}

// writePlot draws GFLOP/s of kernel k against size, one line with points
// per implementation and peer, on a log₂ size axis, and writes it as a
// PNG to path (whole or not at all).
func writePlot(path string, k *bench.Kernel, results []*bench.Result, procs int) error {
	names, series, xlabel := plotSeries(k, results)
	if len(names) == 0 {
		return fmt.Errorf("-plot %s: no %s results to draw", path, k.Name)
	}
	p := plot.New()
	threads := "1 thread"
	if procs > 1 {
		threads = fmt.Sprintf("%d threads", procs)
	}
	p.Title.Text = fmt.Sprintf("%s, float32, %s: GFLOP/s against size", k.Name, threads)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "GFLOP/s (median)"
	p.X.Scale = plot.LogScale{}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true

	var ticks []plot.Tick
	seen := map[float64]bool{}
	var args []any
	top := 0.0
	for _, name := range names {
		args = append(args, name, series[name])
		for _, pt := range series[name] {
			top = max(top, pt.Y)
			if !seen[pt.X] {
				seen[pt.X] = true
				ticks = append(ticks, plot.Tick{Value: pt.X, Label: strconv.FormatFloat(math.Round(pt.X), 'f', -1, 64)})
			}
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	// Room above the lines for the legend, one row per line.
	p.Y.Max = top * (1.15 + 0.07*float64(len(names)))
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return fmt.Errorf("-plot %s: %v", path, err)
	}
	wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("-plot %s: %v", path, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("-plot %s: %v", path, err)
	}
	return writeFileAtomic(path, buf.Bytes())
}
