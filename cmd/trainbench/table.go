package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/gpt"
)

// series is one side's timings at one thread count over all rounds.
type series struct {
	ms []float64 // milliseconds of each timed step
}

// results are the measurements of a run.
type results struct {
	name         string
	cfg          gpt.Config
	batch        int
	threads      []int // thread counts of ours (and torch) rows
	torchThreads []int // every thread count torch ran at
	ours         map[int]*series
	torch        map[int]*series // nil when torch was not measured
	blas         string          // the script's BLAS: "openblas" (threads set with torch's) or "other"
	isa          string          // the kernels simdgpt ran, whose peak loop was sampled (with bench.BF16PeakSuffix: the bfloat16 loop)
	peakName     string          // "FMA peak", or "bf16 peak" with -precision bf16
	peaks        *bench.Peaks    // the FMA peak samples of the run, by thread count (nil: none)
}

// median of s (NaN for none).
func median(s []float64) float64 { return bench.Median(s) }

// msCell is "median (min–max)" of milliseconds.
func msCell(ms []float64) string {
	if len(ms) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(ms), slices.Min(ms), slices.Max(ms))
}

// tokensCell is tokens per second at the median step time.
func (r *results) tokensCell(ms []float64) string {
	if len(ms) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(r.batch*r.cfg.BlockSize)/(median(ms)/1000))
}

// flopsCell is the model's GFLOP/s (gpt's stepFlops) at the median step
// time of s, run on n threads, and its share of the run's FMA peak on n
// goroutines (the largest sample, package bench's method; not clamped,
// marked with bench.OverPeakMark above it). over reports that mark.
func (r *results) flopsCell(n int, s *series) (cell string, over bool) {
	if s == nil || len(s.ms) == 0 {
		return "-", false
	}
	gf := stepFlops(r.cfg, r.batch) / (median(s.ms) * 1e6)
	if r.peaks == nil {
		return fmt.Sprintf("%.1f (-)", gf), false
	}
	frac, ok := r.peaks.Fraction(bench.PeakKey{ISA: r.isa, Threads: n}, gf*1e9)
	if !ok {
		return fmt.Sprintf("%.1f (-)", gf), false
	}
	return fmt.Sprintf("%.1f (%s)", gf, bench.FormatPercent(frac)), frac > 1
}

// ratioCell is how many times faster ours is than torch (torch's median
// over ours) with the 95% confidence interval of bench.Speedup.
func ratioCell(ours, torch []float64) string {
	if len(ours) == 0 || len(torch) == 0 {
		return "-"
	}
	s := bench.Speedup(torch, ours)
	if !s.HasCI {
		return fmt.Sprintf("%.2f× (no CI: too few steps)", s.X)
	}
	return fmt.Sprintf("%.2f× [%.2f, %.2f]", s.X, s.Lo, s.Hi)
}

// best returns the thread count of m whose series has the lowest median
// step time, among counts (0 if none).
func best(m map[int]*series, counts []int) int {
	b := 0
	for _, n := range counts {
		s := m[n]
		if s == nil || len(s.ms) == 0 {
			continue
		}
		if b == 0 || median(s.ms) < median(m[b].ms) {
			b = n
		}
	}
	return b
}

// writeTable prints the results as a Markdown table: one row per thread
// count and, with several, a row comparing each side at its best count;
// then bench.OverPeakNote when a share of the FMA peak is above 100%.
func (r *results) writeTable(w io.Writer) {
	var rows [][]string
	cfgCell := r.name
	over := false
	flops := func(n int, s *series) string {
		cell, o := r.flopsCell(n, s)
		over = over || o
		return cell
	}
	defer func() {
		if over {
			fmt.Fprintf(w, "\n%s\n", bench.OverPeakNote)
		}
	}()
	if r.torch == nil {
		rows = append(rows, []string{"config", "threads", "simdgpt ms/step", "simdgpt tokens/s", "simdgpt GFLOP/s (% " + r.peakName + ")"})
		for _, n := range r.threads {
			s := r.ours[n]
			rows = append(rows, []string{cfgCell, fmt.Sprint(n), msCell(s.ms), r.tokensCell(s.ms), flops(n, s)})
		}
		writeMarkdown(w, rows)
		return
	}
	rows = append(rows, []string{"config", "threads", "simdgpt ms/step", "torch ms/step", "simdgpt tokens/s", "torch tokens/s", "simdgpt speed [95% CI]", "simdgpt GFLOP/s (% " + r.peakName + ")"})
	get := func(m map[int]*series, n int) (*series, []float64) {
		if s := m[n]; s != nil {
			return s, s.ms
		}
		return nil, nil
	}
	for _, n := range r.torchThreads {
		so, o := get(r.ours, n)
		_, t := get(r.torch, n)
		rows = append(rows, []string{cfgCell, fmt.Sprint(n), msCell(o), msCell(t), r.tokensCell(o), r.tokensCell(t), ratioCell(o, t), flops(n, so)})
	}
	if len(r.torchThreads) > 1 {
		bo, bt := best(r.ours, r.threads), best(r.torch, r.torchThreads)
		so, o := get(r.ours, bo)
		_, t := get(r.torch, bt)
		rows = append(rows, []string{cfgCell, fmt.Sprintf("best: %d vs %d", bo, bt), msCell(o), msCell(t), r.tokensCell(o), r.tokensCell(t), ratioCell(o, t), flops(bo, so)})
	}
	writeMarkdown(w, rows)
}

// writeMarkdown prints rows (the first is the header) as an aligned
// Markdown table.
func writeMarkdown(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i, c := range row {
			b.WriteString("| ")
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))+1))
		}
		b.WriteString("|\n")
		io.WriteString(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i, n := range width {
		sep[i] = strings.Repeat("-", n)
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
}
