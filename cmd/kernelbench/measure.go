package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// measure runs the selected cases and prints the header, then, once every
// sample is in, the FMA peaks, the tables and the comparison, then writes
// the -o file and the chart. Once ctx is done it stops before the next
// sample and returns ctx's error, printing and writing nothing more: an
// interrupted run's samples are not a measurement.
func measure(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.procs))
	for _, im := range cfg.selected {
		if im.SetThreads != nil {
			im.SetThreads(cfg.procs)
		}
	}
	readBW, readLine := measureRead(cfg)
	printHeader(stdout, cfg, readLine)

	// Estimate the run's length for the progress lines: every sample of
	// every supported implementation, plus about as much for calibration.
	var total time.Duration
	for _, c := range cfg.cases {
		for _, im := range cfg.selected {
			if c.Kernel.Supports(c.Shape, im) {
				total += time.Duration(cfg.count+1) * cfg.time
			}
		}
	}
	progress := total >= progressAfter
	start := time.Now()
	var results []*bench.Result
	peaks := &bench.Peaks{} // every FMA peak sample of the run
	for i, c := range cfg.cases {
		if progress {
			el := time.Since(start)
			fmt.Fprintf(stderr, "kernelbench: [%d/%d] %s (%s elapsed, about %s in all)\n",
				i+1, len(cfg.cases), c, el.Round(time.Second), max(total, el).Round(time.Second))
		}
		rs, err := bench.RunContext(ctx, c, cfg.selected, bench.Options{Count: cfg.count, Time: cfg.time, Peaks: peaks})
		if err != nil {
			return stopped{fmt.Sprintf("case [%d/%d] %s", i+1, len(cfg.cases), c), err}
		}
		results = append(results, rs...)
		runtime.GC() // not during the next case's samples
	}
	if progress {
		fmt.Fprintf(stderr, "kernelbench: done in %s\n", time.Since(start).Round(time.Second))
	}

	// Every sample is in: the peaks are final.
	printKey(stdout, cfg, peaks, readLine != "")
	for _, k := range cfg.allKernels {
		var rs []*bench.Result
		for _, r := range results {
			if r.Case.Kernel == k {
				rs = append(rs, r)
			}
		}
		if len(rs) > 0 {
			printTable(stdout, k, rs, readBW, peaks)
			printOpenBLAS(stdout, k, rs)
		}
	}
	if cfg.baseline != nil {
		printComparison(stdout, cfg.compare, cfg.baseline, results)
	}
	if cfg.out != "" {
		if err := writeBenchFile(cfg.out, cfg, results, peaks); err != nil {
			return err
		}
	}
	if cfg.plot != "" {
		if err := writePlot(cfg.plot, cfg.plotKernel, results, cfg.procs); err != nil {
			return err
		}
	}
	return nil
}

// stopped is the error of a run whose context was done during case where.
type stopped struct {
	where string
	err   error
}

func (s stopped) Error() string { return s.where + ": " + s.err.Error() }
func (s stopped) Unwrap() error { return s.err }

// readSamples is the number of samples of the streaming read bandwidth
// the header's figure is the median of.
const readSamples = 7

// measureRead measures the streaming read bandwidth (bench.ReadRate of the
// widest implementation, GOMAXPROCS goroutines) when a selected kernel is
// read-bound and returns it in GB/s with the header's line about it; 0
// and "" when no such kernel runs or no implementation has a peak loop.
func measureRead(cfg *config) (float64, string) {
	p := bench.Widest()
	need := false
	for _, c := range cfg.cases {
		need = need || c.Kernel.ReadBound
	}
	if !need || p == nil {
		return 0, ""
	}
	x := bench.ReadBuffer()
	p.Sum(x) // warm-up
	var gbs []float64
	for range readSamples {
		gbs = append(gbs, bench.ReadRate(p, x, cfg.procs)/1e9)
	}
	bw := bench.Median(gbs)
	return bw, fmt.Sprintf("read bw:    %s GB/s [%s, %s]: %s %s over %d MiB by %d goroutines, median and range of %d, before the cases",
		bench.FormatRate(bw), bench.FormatRate(slices.Min(gbs)), bench.FormatRate(slices.Max(gbs)), p.Name(), bench.ReadRateHow(), 4*len(x)>>20, cfg.procs, readSamples)
}

// printHeader prints the machine and the run's settings, before the
// samples.
func printHeader(w io.Writer, cfg *config, readLine string) {
	cpu := kernels.CPU()
	fmt.Fprintf(w, "# kernelbench\n\n")
	fmt.Fprintf(w, "cpu:        %s\n", cpu.Name)
	fmt.Fprintf(w, "features:   %s\n", strings.Join(cpu.Features, " "))
	fmt.Fprintf(w, "caches:     L1d %s, L2 %s per core; L3 %s; %d physical cores, %d logical CPUs\n",
		kib(cpu.L1D), kib(cpu.L2), kib(cpu.L3), cpu.Cores, runtime.NumCPU())
	fmt.Fprintf(w, "go:         %s %s/%s, GOMAXPROCS %d (peers' threads %d)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, cfg.procs, cfg.procs)
	if readLine != "" {
		fmt.Fprintln(w, readLine)
	}
	var names []string
	for _, im := range cfg.selected {
		names = append(names, im.Name)
	}
	fmt.Fprintf(w, "impls:      %s\n", strings.Join(names, ", "))
	for _, im := range cfg.selected {
		if im.Peer && im.About != "" {
			fmt.Fprintf(w, "            %s: %s\n", im.Name, im.About)
		}
	}
	fmt.Fprintf(w, "samples:    %d per implementation and case, %v each, implementations interleaved\n", cfg.count, cfg.time)
}

// printKey prints, once every sample is in, the FMA peaks of the run
// (when a compute-bound kernel ran) and how to read the tables.
func printKey(w io.Writer, cfg *config, peaks *bench.Peaks, readBW bool) {
	compute := false
	for _, c := range cfg.cases {
		compute = compute || c.Kernel.Bound == bench.ComputeBound
	}
	if compute {
		var ps []string
		for _, k := range peaks.Keys() {
			ps = append(ps, k.ISA+" "+peaks.Describe(k))
		}
		if len(ps) == 0 {
			fmt.Fprintf(w, "FMA peak:   none measured (no FMA peak loop in this build)\n")
		} else {
			fmt.Fprintf(w, "FMA peak:   %s\n", strings.Join(ps, ", "))
			fmt.Fprintf(w, "            on %d goroutine(s), sampled before, between and after the samples of each compute-bound case\n", cfg.procs)
		}
	}
	fmt.Fprintf(w, "\ntime/op: median (±: its 95%% interval).")
	if compute {
		fmt.Fprintf(w, " %%peak: the rate over the FMA peak above of the implementation's ISA\n")
		fmt.Fprintf(w, "(the widest one for generic and peers): the largest of its samples, so that a slow sample cannot raise %%peak;\n")
		fmt.Fprintf(w, "a rate above it is marked %s (see the note under the table).", bench.OverPeakMark)
	}
	fmt.Fprintf(w, "\nvs X: how many times faster than X (X's median time / this one's), [95%% interval], Mann-Whitney p.\n")
	if readBW {
		fmt.Fprintf(w, "%%read bw: a read-bound kernel's GB/s (bytes of its streamed operand) over the read bw above.\n")
	}
}

// kib formats a byte count as KiB or MiB.
func kib(n int) string {
	switch {
	case n <= 0:
		return "?"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// printTable prints one kernel's results as a Markdown table: a row per
// shape and implementation, a "vs" column for generic and for each peer
// (none when a single implementation ran, as for the copy kernel).
//
// A compute-bound kernel's table gives each rate as a percentage of the
// run's FMA peak of its ISA (Result.PeakFrac against peaks), marked with
// bench.OverPeakMark, and followed by bench.OverPeakNote, when above it.
// A read-bound kernel's table (Kernel.ReadBound) gives each rate as a
// percentage of readBW (GB/s, the header's "read bw"), when measured.
func printTable(w io.Writer, k *bench.Kernel, rs []*bench.Result, readBW float64, peaks *bench.Peaks) {
	compute := k.Bound == bench.ComputeBound
	var refs []string // generic, then the peers present, in order
	alone := true     // one implementation only: no "vs" columns
	for _, r := range rs {
		alone = alone && r.Impl.Name == rs[0].Impl.Name
		if (r.Impl.Name == "generic" || r.Impl.Peer) && !slices.Contains(refs, r.Impl.Name) {
			refs = append(refs, r.Impl.Name)
		}
	}
	if alone {
		refs = nil
	}
	slices.SortStableFunc(refs, func(a, b string) int {
		if a == "generic" {
			return -1
		}
		if b == "generic" {
			return 1
		}
		return 0
	})
	unit := "GB/s"
	if compute {
		unit = "GFLOP/s"
	}
	head := []string{"shape", "impl", "time/op", "±", unit}
	if compute {
		head = append(head, "%peak")
	}
	readPct := k.ReadBound && readBW > 0
	if readPct {
		head = append(head, "%read bw")
	}
	for _, ref := range refs {
		head = append(head, "vs "+ref)
	}
	rows := [][]string{head}
	over := false
	for _, r := range rs {
		sum := bench.Summarize(r.Ns)
		rate, _ := r.Rate()
		row := []string{r.Case.Shape.Name, r.Impl.Name, bench.FormatNs(sum.Center), pm(sum), bench.FormatRate(rate)}
		if compute {
			cell := "–"
			if frac, ok := r.PeakFrac(peaks); ok {
				cell = bench.FormatPercent(frac)
				over = over || frac > 1
			}
			row = append(row, cell)
		}
		if readPct {
			row = append(row, fmt.Sprintf("%.0f%%", 100*rate/readBW))
		}
		for _, ref := range refs {
			row = append(row, versus(rs, r, ref))
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "\n## %s: %s\n\n", k.Name, k.Doc)
	writeMarkdown(w, rows)
	if over {
		fmt.Fprintf(w, "\n%s\n", bench.OverPeakNote)
	}
}

// printOpenBLAS prints, after a kernel's table, the comparisons with
// OpenBLAS side by side: each OpenBLAS peer
// (openblas, openblas-avx2; see package peers) against simdgpt's
// implementation of the peer's ISA: the widest one against the kernels
// OpenBLAS picks for this CPU, and avx2 against OpenBLAS's AVX2 kernels.
// It prints nothing when no OpenBLAS peer and its counterpart ran.
func printOpenBLAS(w io.Writer, k *bench.Kernel, rs []*bench.Result) {
	type pair struct{ ours, peer string }
	var pairs []pair
	var shapes []string
	for _, r := range rs {
		if !slices.Contains(shapes, r.Case.Shape.Name) {
			shapes = append(shapes, r.Case.Shape.Name)
		}
		im := r.Impl
		if !im.Peer || !strings.HasPrefix(im.Name, "openblas") || im.ISA == nil {
			continue
		}
		p := pair{im.ISA.Name(), im.Name}
		if slices.Contains(pairs, p) {
			continue
		}
		for _, o := range rs {
			if !o.Impl.Peer && o.Impl.Name == p.ours {
				pairs = append(pairs, p)
				break
			}
		}
	}
	if len(pairs) == 0 {
		return
	}
	head := []string{"shape"}
	for _, p := range pairs {
		head = append(head, p.ours+" vs "+p.peer)
	}
	rows := [][]string{head}
	for _, shape := range shapes {
		row := []string{shape}
		for _, p := range pairs {
			cell := "–"
			for _, r := range rs {
				if r.Impl.Name == p.ours && !r.Impl.Peer && r.Case.Shape.Name == shape {
					cell = versus(rs, r, p.peer)
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(w, "\n### %s against OpenBLAS, ISA for ISA\n\n", k.Name)
	fmt.Fprintf(w, "How many times faster simdgpt is than each OpenBLAS instance (the header says which core each runs),\n")
	fmt.Fprintf(w, "with simdgpt's implementation of the instance's ISA: the widest against the kernels OpenBLAS picks for\n")
	fmt.Fprintf(w, "this CPU (openblas), avx2 against OpenBLAS's AVX2 kernels (openblas-avx2). [95%% interval], Mann-Whitney p.\n\n")
	writeMarkdown(w, rows)
}

// pm formats the 95% interval of a median as "±3%" ("±∞" with fewer
// than 6 samples).
func pm(s benchmath.Summary) string { return "±" + s.PctRangeString() }

// versus returns r's speed-up over the result of implementation ref on
// the same case, or "" (r is ref) or "–" (ref did not run the case).
func versus(rs []*bench.Result, r *bench.Result, ref string) string {
	if r.Impl.Name == ref {
		return ""
	}
	for _, o := range rs {
		if o.Impl.Name == ref && o.Case.Shape.Name == r.Case.Shape.Name {
			return bench.Speedup(o.Ns, r.Ns).String()
		}
	}
	return "–"
}

// writeMarkdown writes rows (the first is the header) as a Markdown table
// with padded columns.
func writeMarkdown(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], 3, len([]rune(c)))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	fmt.Fprintln(w, "|-"+strings.Join(sep, "-|-")+"-|")
	for _, row := range rows[1:] {
		line(row)
	}
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
