package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/internal/atomicfile"
	"github.com/simdgpt/simdgpt/internal/readfile"
	"github.com/simdgpt/simdgpt/kernels"
)

// benchName returns the Go benchmark name of a result, without the
// "Benchmark" prefix: "Gemm/shape=sq512/impl=avx512". The key=value parts
// let benchstat pick columns and rows, e.g. benchstat -col /impl.
func benchName(r *bench.Result) string {
	k := r.Case.Kernel.Name
	return strings.ToUpper(k[:1]) + k[1:] + "/shape=" + r.Case.Shape.Name + "/impl=" + r.Impl.Name
}

// writeBenchFile writes every sample in Go benchmark format: one line per
// sample with ns/op, the rate (GFLOP/s, or MB/s for memory-bound kernels)
// and %peak (the sample's rate over the run's FMA peak of its ISA in
// peaks, not clamped). The file is written whole or not at all.
func writeBenchFile(path string, cfg *config, results []*bench.Result, peaks *bench.Peaks) error {
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	config := []benchfmt.Config{
		{Key: "goos", Value: []byte(runtime.GOOS), File: true},
		{Key: "goarch", Value: []byte(runtime.GOARCH), File: true},
		{Key: "pkg", Value: []byte("github.com/simdgpt/simdgpt/cmd/kernelbench"), File: true},
		{Key: "cpu", Value: []byte(kernels.CPU().Name), File: true},
		{Key: "gomaxprocs", Value: []byte(fmt.Sprint(cfg.procs)), File: true},
	}
	for _, r := range results {
		w0 := r.Case.Work()
		fracs := r.PeakFracs(peaks)
		for i, ns := range r.Ns {
			vals := []benchfmt.Value{{Value: ns, Unit: "ns/op"}}
			if r.Case.Kernel.Bound == bench.ComputeBound {
				vals = append(vals, benchfmt.Value{Value: bench.GFLOPS(w0.Flops, ns), Unit: "GFLOP/s"})
				if i < len(fracs) {
					vals = append(vals, benchfmt.Value{Value: 100 * fracs[i], Unit: "%peak"})
				}
			} else {
				vals = append(vals, benchfmt.Value{Value: bench.GBPS(w0.Bytes, ns) * 1e3, Unit: "MB/s"})
			}
			res := &benchfmt.Result{Config: config, Name: benchfmt.Name(benchName(r)), Iters: r.Iters[i], Values: vals}
			if err := w.Write(res); err != nil {
				return fmt.Errorf("-o %s: %v", path, err)
			}
		}
	}
	if buf.Len() > maxBenchFileBytes {
		return fmt.Errorf("-o %s: %d bytes, more than the limit of %d -compare reads", path, buf.Len(), maxBenchFileBytes)
	}
	return writeFileAtomic(path, buf.Bytes())
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so that a failure leaves any earlier file intact.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data)
}

// benchFile is a saved run: the ns/op samples by benchmark name, in the
// order the names first appear.
type benchFile struct {
	names []string
	ns    map[string][]float64
}

// Limits on a -compare file: its size and the samples of one benchmark
// (the statistics cost memory and time that grow with the samples).
const (
	maxBenchFileBytes = 64 << 20
	maxSamples        = 10000
)

// readBenchFile reads a file in Go benchmark format. It fails on a file
// that cannot be read, is not a regular file or is larger than
// maxBenchFileBytes, on a syntax error (naming the line), on a time per op
// that is not a positive finite number (naming the line), on more than
// maxSamples samples of one benchmark and on a file with no ns/op results.
func readBenchFile(path string) (*benchFile, error) {
	f, _, err := readfile.Open(path, maxBenchFileBytes)
	if err != nil {
		var pe *iofs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %v", path, pe.Err)
		}
		return nil, fmt.Errorf("-compare: %v", err)
	}
	defer f.Close()
	return parseBenchFile(io.LimitReader(f, maxBenchFileBytes), path)
}

func parseBenchFile(r io.Reader, path string) (*benchFile, error) {
	bf := &benchFile{ns: map[string][]float64{}}
	rd := benchfmt.NewReader(r, path)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("-compare: %s is not a Go benchmark file: %v", path, rec)
		case *benchfmt.Result:
			ns, ok := nsPerOp(rec)
			if !ok {
				continue
			}
			name := rec.Name.String()
			if !(ns > 0) || math.IsInf(ns, 0) {
				_, line := rec.Pos()
				return nil, fmt.Errorf("-compare: %s:%d: %s: time per op %v is not a positive finite number", path, line, name, ns)
			}
			if _, seen := bf.ns[name]; !seen {
				bf.names = append(bf.names, name)
			}
			if len(bf.ns[name]) >= maxSamples {
				_, line := rec.Pos()
				return nil, fmt.Errorf("-compare: %s:%d: %s: more than %d samples", path, line, name, maxSamples)
			}
			bf.ns[name] = append(bf.ns[name], ns)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("-compare: reading %s: %v", path, err)
	}
	if len(bf.names) == 0 {
		return nil, errors.New("-compare: " + path + " holds no benchmark results with a time per op (write one with kernelbench -o)")
	}
	return bf, nil
}

// nsPerOp returns the time per op of r in nanoseconds (benchfmt tidies
// ns/op into sec/op, except values such as 0 and Inf).
func nsPerOp(r *benchfmt.Result) (float64, bool) {
	for _, v := range r.Values {
		switch v.Unit {
		case "sec/op":
			return v.Value * 1e9, true
		case "ns/op":
			return v.Value, true
		}
	}
	return 0, false
}

// printComparison prints, benchstat-style, the change of time per op of
// every benchmark of this run that the saved file also has.
func printComparison(w io.Writer, path string, old *benchFile, results []*bench.Result) {
	fmt.Fprintf(w, "\n## change against %s\n\n", path)
	rows := [][]string{{"benchmark", "old time/op", "±", "new time/op", "±", "change", "p"}}
	matched := map[string]bool{}
	for _, r := range results {
		name := benchName(r)
		ons, ok := old.ns[name]
		if !ok {
			continue
		}
		matched[name] = true
		th := &benchmath.DefaultThresholds
		os, ns := benchmath.NewSample(slices.Clone(ons), th), benchmath.NewSample(slices.Clone(r.Ns), th)
		osum, nsum := bench.Summarize(ons), bench.Summarize(r.Ns)
		cmp := benchmath.AssumeNothing.Compare(os, ns)
		rows = append(rows, []string{name, bench.FormatNs(osum.Center), pm(osum),
			bench.FormatNs(nsum.Center), pm(nsum), cmp.FormatDelta(osum.Center, nsum.Center), cmp.String()})
	}
	if len(rows) == 1 {
		fmt.Fprintf(w, "No benchmark of this run is in %s (it has %d, such as %s).\n", path, len(old.names), old.names[0])
		return
	}
	writeMarkdown(w, rows)
	fmt.Fprintf(w, "\nchange: of the median time per op; ~ when the Mann-Whitney test does not tell the runs apart (p ≥ 0.05).\n")
	if n := len(old.names) - len(matched); n > 0 {
		fmt.Fprintf(w, "%d benchmarks of %s were not run this time.\n", n, path)
	}
}
