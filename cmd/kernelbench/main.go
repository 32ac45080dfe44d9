// Command kernelbench measures simdgpt's kernels, and the attention layer
// built on them, on every implementation this CPU runs, side by side with
// other libraries (peers: gonum's Sgemm, gonum's blas.Float32 served by
// kernels/simdblas, and OpenBLAS when built with -tags openblas), and
// prints a table per kernel: median time per call, GFLOP/s or GB/s,
// percent of the FMA peak, and the speed-up over generic and over each
// peer with a 95% confidence interval and p-value. The copy kernel
// measures memory bandwidth (Go's copy, in cache and streaming from
// memory), the bound of a decoding step that reads every weight once.
//
// The implementations of one case run interleaved (A B A B ...) so that
// their ratios share the machine's conditions.
//
// %peak, for compute-bound kernels, is the rate over the FMA peak of the
// implementation's ISA (the widest one for generic and peers) on
// GOMAXPROCS goroutines, measured as package bench measures every percent
// of peak: the peak loop is sampled for each case before its first
// sample, between its samples (a sixteenth of their time) and after its
// last; the peak is the largest sample of the whole run, so that a sample
// taken in a slow moment (a lower clock, a busy neighbour) cannot lower
// it; and %peak is computed against it once every sample is in, which is
// why the FMA peak line and the tables are printed at the end. A kernel
// faster than every peak sample would mean the peak loop is not at the
// machine's peak (a bug): its %peak is printed as it is, followed by "!",
// with a note under the table, never clamped.
//
// With -tags openblas there are two OpenBLAS peers in the same process:
// "openblas", the kernels OpenBLAS picks for this CPU (or those
// OPENBLAS_CORETYPE in the environment names), and, on amd64,
// "openblas-avx2", a second instance of the library loaded with
// OPENBLAS_CORETYPE set to its AVX2 core (Haswell, or Zen on AMD). The
// header names the core each instance runs, and the gemm table is
// followed by the two comparisons side by side, per shape: simdgpt's
// widest implementation against openblas, and avx2 against openblas-avx2.
//
// Usage:
//
//	kernelbench [flags]
//
// Examples:
//
//	kernelbench -list
//	kernelbench -kernels gemm -shapes sq256,sq512 -count 8
//	kernelbench -short -time 5ms
//	kernelbench -kernels attention -count 8
//	kernelbench -o new.txt -compare old.txt -plot gemm.png
//	go run -tags openblas ./cmd/kernelbench -kernels gemm
//
// Unknown kernel, shape or implementation names print the valid names and
// exit with status 2, as does a flag outside its limit (-procs at most
// 1024, gpt.MaxThreads; -count 1 to 1000; -time at most a minute, and
// -count × -time over every case and implementation at most 24 hours),
// in one line naming the flag, its value and the limit. A run whose
// largest case would not fit in the memory available (gpt.CheckMemory)
// and an unreadable or malformed -compare file are errors (status 1)
// before anything runs. Ctrl-C or SIGTERM stops the run before
// the next sample (a second signal at once) with one line on stderr and
// exit status 130 (SIGINT) or 143 (SIGTERM): no tables are printed and no
// -o or -plot file is written from an incomplete run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/bench/peers"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/internal/atomicfile"
	"github.com/simdgpt/simdgpt/internal/interrupt"
	"github.com/simdgpt/simdgpt/kernels"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// progressAfter is how long a run must be expected to take before
// progress is printed on stderr.
var progressAfter = 3 * time.Second

// config is what the flags ask for.
type config struct {
	kernels, shapes, impls string
	count                  int
	time                   time.Duration
	short, list            bool
	procs                  int
	out, compare, plot     string
	cases                  []bench.Case
	selected               []*bench.Impl
	allKernels             []*bench.Kernel
	baseline               *benchFile
	plotKernel             *bench.Kernel
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) int {
	if err := kernels.EnvError(); err != nil {
		// Measuring another implementation than the one asked for would
		// mislead: stop, unlike the library, which falls back.
		fmt.Fprintf(stderr, "kernelbench: %v\n", err)
		return 2
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "kernelbench: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	if cfg.list {
		printList(stdout, cfg)
		return 0
	}
	w := interrupt.Start(func(sig os.Signal) {
		fmt.Fprintf(stderr, "kernelbench: stopped by a second %s\n", interrupt.Name(sig))
		os.Exit(interrupt.ExitStatus(sig))
	})
	defer w.Stop()
	if err := measure(w.Context(), cfg, stdout, stderr); err != nil {
		var st stopped
		if errors.As(err, &st) && errors.Is(err, context.Canceled) {
			sig := w.Signal()
			fmt.Fprintf(stderr, "kernelbench: interrupted by %s in %s: no results printed or written\n", interrupt.Name(sig), st.where)
			return interrupt.ExitStatus(sig)
		}
		fmt.Fprintf(stderr, "kernelbench: %v\n", err)
		return 1
	}
	return 0
}

// allImpls returns simdgpt's implementations this CPU runs, their GEMM
// tile variants (avx512/14x32, avx512/8x48, ...), then the peers: gonum, gonum+simdblas, openblas and openblas-avx2 (with -tags
// openblas), gemm+mask, and memmove (Go's copy, the copy kernel's one
// implementation).
func allImpls() []*bench.Impl {
	impls := bench.OursAll()
	impls = append(impls, bench.TileVariants()...)
	impls = append(impls, peers.All()...)
	return append(impls, bench.GemmThenMask(kernels.Default()), bench.Memmove())
}

// allKernels returns bench's kernels followed by the attention layer
// (see attentionKernel), in the order tables list them.
func allKernels() []*bench.Kernel {
	return append(bench.Kernels(), attentionKernel())
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("kernelbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported on one line below
	fs.StringVar(&cfg.kernels, "kernels", "", "comma-separated `names` of kernels to run (default all; see -list)")
	fs.StringVar(&cfg.shapes, "shapes", "", "comma-separated `names` of shapes to run (default all of each kernel; see -list)")
	fs.StringVar(&cfg.impls, "impls", "", "comma-separated `names` of implementations and peers to run (default all)")
	fs.IntVar(&cfg.count, "count", 6, fmt.Sprintf("samples of each implementation per case, 1 to %d (6 or more give a 95%% interval for medians; 4 or more for ratios)", maxCount))
	fs.DurationVar(&cfg.time, "time", 100*time.Millisecond, fmt.Sprintf("target `duration` of one sample (at least one call), at most %v; -count × -time over every case and implementation at most %v", maxSampleTime, maxRunTime))
	fs.BoolVar(&cfg.short, "short", false, "one shape per kernel (unless -shapes), and -time 10ms unless set")
	fs.BoolVar(&cfg.list, "list", false, "list kernels, shapes and implementations, and exit")
	fs.IntVar(&cfg.procs, "procs", 1, fmt.Sprintf("GOMAXPROCS for the run and the thread count of peers, at most %d (0: all CPUs, up to that limit)", gpt.MaxThreads))
	fs.StringVar(&cfg.out, "o", "", "write the samples to `file` in Go benchmark format (for benchstat)")
	fs.StringVar(&cfg.compare, "compare", "", "print the change of this run against a `file` saved with -o")
	fs.StringVar(&cfg.plot, "plot", "", "write a chart of GFLOP/s against size, one line per implementation, to `file`.png")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kernelbench [flags]\n\nMeasures simdgpt's kernels on every implementation and peer, interleaved.\n"+
			"%%peak is the rate over the largest FMA peak sample of the run (sampled before, between and after each\n"+
			"case's samples; the bfloat16 peak loop's for gemmbf16), computed once all samples are in; a %%peak\n"+
			"marked ! is above every peak sample.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return nil, err
		}
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, usageError{msg + " (see kernelbench -h)"}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unexpected argument %q (all settings are flags; see -h)", fs.Arg(0))}
	}
	timeSet := false
	fs.Visit(func(f *flag.Flag) { timeSet = timeSet || f.Name == "time" })
	if cfg.short && !timeSet {
		cfg.time = 10 * time.Millisecond
	}
	switch {
	case cfg.count < 1 || cfg.count > maxCount:
		return nil, usageError{fmt.Sprintf("-count %d: want 1 to %d samples", cfg.count, maxCount)}
	case cfg.time <= 0 || cfg.time > maxSampleTime:
		return nil, usageError{fmt.Sprintf("-time %v: want a positive duration of at most %v", cfg.time, maxSampleTime)}
	case cfg.procs < 0 || cfg.procs > gpt.MaxThreads:
		return nil, usageError{fmt.Sprintf("-procs %d: want 0 (all CPUs) to the limit of %d threads", cfg.procs, gpt.MaxThreads)}
	case cfg.plot != "" && !strings.HasSuffix(strings.ToLower(cfg.plot), ".png"):
		return nil, usageError{fmt.Sprintf("-plot %s: the chart is a PNG; name the file *.png", cfg.plot)}
	}
	if cfg.procs == 0 {
		cfg.procs = min(runtime.NumCPU(), gpt.MaxThreads)
	}

	cfg.allKernels = allKernels()
	cases, err := bench.Select(cfg.allKernels, splitList(cfg.kernels), splitShapes(cfg.shapes, cfg.allKernels), cfg.short)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	cfg.cases = cases
	cfg.selected, err = bench.SelectImpls(allImpls(), splitList(cfg.impls))
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if !cfg.list {
		if err := checkRunSize(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.plot != "" {
		for _, c := range cases {
			if c.Kernel.Name == "gemm" || c.Kernel.Name == "maskedscores" {
				cfg.plotKernel = c.Kernel
				break
			}
		}
		if cfg.plotKernel == nil {
			return nil, usageError{"-plot draws GFLOP/s of gemm or maskedscores: select one of them with -kernels"}
		}
	}
	for _, f := range []struct{ flag, path string }{{"-o", cfg.out}, {"-plot", cfg.plot}} {
		// Check now that the file can be created where asked, rather than
		// after minutes of measuring.
		if f.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(f.path)); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s %s: no directory %s to write it in", f.flag, f.path, filepath.Dir(f.path))
		}
		if st, err := os.Stat(f.path); err == nil && st.IsDir() {
			return nil, fmt.Errorf("%s %s: is a directory", f.flag, f.path)
		}
		// A FIFO or a device (or a link to one) is refused, not replaced.
		if err := atomicfile.Check(f.path); err != nil {
			return nil, fmt.Errorf("%s %s: %v", f.flag, f.path, errors.Unwrap(err))
		}
		// And that a file can be created there (permissions, read-only
		// file system).
		probe, err := os.CreateTemp(filepath.Dir(f.path), "."+filepath.Base(f.path)+".probe*")
		if err != nil {
			var pe *iofs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s %s: cannot create a file in %s: %v", f.flag, f.path, filepath.Dir(f.path), err)
		}
		probe.Close()
		os.Remove(probe.Name())
	}
	if cfg.compare != "" {
		// Read it now: a bad file should fail before minutes of measuring.
		cfg.baseline, err = readBenchFile(cfg.compare)
		if err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// Limits of the flags that size a run, checked before anything runs.
const (
	maxCount      = 1000           // -count
	maxSampleTime = time.Minute    // -time
	maxRunTime    = 24 * time.Hour // -count × -time over every case and implementation
)

// checkRunSize refuses, before anything runs, a run whose samples would
// take longer than maxRunTime (usage error) and one whose largest case
// would not fit in the memory available (bench.Case.Memory, with the
// read-bandwidth buffer when a case needs it; a run-time error, exit
// status 1, as every memory check of the module).
func checkRunSize(cfg *config) error {
	pairs := 0
	var need float64
	var largest bench.Case
	impls := 0
	for _, c := range cfg.cases {
		n := 0
		for _, im := range cfg.selected {
			if c.Kernel.Supports(c.Shape, im) {
				n++
			}
		}
		pairs += n
		if b := c.Memory(cfg.selected); b > need {
			need, largest, impls = b, c, n
		}
	}
	if total := float64(pairs) * float64(cfg.count) * float64(cfg.time); total > float64(maxRunTime) {
		return usageError{fmt.Sprintf("-count %d × -time %v over %d cases × implementations is %v of samples, above the limit of %v",
			cfg.count, cfg.time, pairs, time.Duration(total).Round(time.Second), maxRunTime)}
	}
	if impls == 0 {
		return nil
	}
	for _, c := range cfg.cases {
		if c.Kernel.ReadBound {
			need += float64(bench.ReadBufferBytes())
			break
		}
	}
	what := fmt.Sprintf("case %s (-kernels %s -shapes %s) on %d implementations (-impls)", largest, largest.Kernel.Name, largest.Shape.Name, impls)
	return gpt.CheckMemory(what, int64(min(need, math.MaxInt64/2)))
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// splitShapes splits a -shapes value at the commas that separate names,
// keeping those inside names such as "T=256,d=64" and "n=4096,stream":
// consecutive items are joined when together they name a shape.
func splitShapes(s string, ks []*bench.Kernel) []string {
	known := map[string]bool{}
	for _, k := range ks {
		for _, sh := range k.Shapes {
			known[sh.Name] = true
		}
	}
	parts := splitList(s)
	var out []string
	for i := 0; i < len(parts); {
		n := 1
		for j := len(parts); j > i+1; j-- {
			if known[strings.Join(parts[i:j], ",")] {
				n = j - i
				break
			}
		}
		out = append(out, strings.Join(parts[i:i+n], ","))
		i += n
	}
	return out
}

// printList prints the kernels with their shapes, and the implementations.
func printList(w io.Writer, cfg *config) {
	fmt.Fprintln(w, "kernels and their shapes (-kernels, -shapes; * marks the -short shape):")
	for _, k := range cfg.allKernels {
		fmt.Fprintf(w, "  %-18s %s\n", k.Name, k.Doc)
		var names []string
		for _, s := range k.Shapes {
			n := s.Name
			if n == k.Short {
				n += "*"
			}
			names = append(names, n)
		}
		fmt.Fprintf(w, "  %-18s %s\n", "", strings.Join(names, " "))
	}
	fmt.Fprintln(w, "implementations (-impls):")
	for _, im := range allImpls() {
		what := "simdgpt"
		if im.Peer {
			what = "peer"
		}
		about := im.About
		if about == "" && im.ISA != nil && !im.Peer {
			about = "simdgpt " + im.Name
		}
		fmt.Fprintf(w, "  %-16s %-8s %s\n", im.Name, what, about)
	}
}
