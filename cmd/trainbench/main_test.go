package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
	"github.com/simdgpt/simdgpt/kernels"
)

// TestMain has the runs measure the read bandwidth over 4 MiB: the
// tables' tests check what is printed, not the rate, and the full buffer
// (8× the L3) takes minutes a pass under an emulator.
func TestMain(m *testing.M) {
	bandwidthBytes = func(int) int { return 4 << 20 }
	os.Exit(m.Run())
}

func TestFullBandwidthBytes(t *testing.T) {
	for _, tc := range []struct {
		l3   int
		want int64
	}{
		{0, 256 << 20},
		{32 << 20, 256 << 20},
		{64 << 20, 512 << 20},
		{260 << 20, min(2080<<20, math.MaxInt/2)},
	} {
		if got := fullBandwidthBytes(tc.l3); int64(got) != tc.want {
			t.Errorf("fullBandwidthBytes(%d) = %d, want %d", tc.l3, got, tc.want)
		}
	}
}

// tiny is a small custom shape for the tests that train.
var tiny = []string{"-layers", "2", "-heads", "2", "-width", "32", "-block", "16", "-batch", "4"}

func TestParseOptions(t *testing.T) {
	a, b := presets["a"], presets["b"]
	wide := a.cfg
	wide.Width = 256
	for _, tc := range []struct {
		args    []string
		name    string
		cfg     gpt.Config
		batch   int
		threads []int
		torch   []int
		err     string // substring of the error; "" for none
	}{
		{args: nil, name: "a", cfg: a.cfg, batch: 12, threads: []int{1, 2}, torch: []int{1, 2}},
		{args: []string{"-config", "b"}, name: "b", cfg: b.cfg, batch: 8, threads: []int{1, 2}, torch: []int{1, 2}},
		{args: []string{"-width", "256"}, name: "custom", cfg: wide, batch: 12, threads: []int{1, 2}, torch: []int{1, 2}},
		{args: []string{"-width", "128", "-batch", "12"}, name: "a", cfg: a.cfg, batch: 12, threads: []int{1, 2}, torch: []int{1, 2}},
		{args: []string{"-threads", "2, 1,2", "-torch-threads", "4,1"}, name: "a", cfg: a.cfg, batch: 12, threads: []int{2, 1}, torch: []int{2, 1, 4}},
		{args: []string{"-config", "c"}, err: `-config "c": want a or b`},
		{args: []string{"-heads", "3"}, err: "not a multiple of Heads = 3"},
		{args: []string{"-layers", "-1"}, err: "-layers -1: want 0 to 1024 (0 keeps the preset's)"},
		{args: []string{"-threads", "0"}, err: `"0" is not a thread count`},
		{args: []string{"-threads", "1,x"}, err: `"x" is not a thread count`},
		{args: []string{"-threads", ""}, err: "-threads: no thread count"},
		{args: []string{"-steps", "0"}, err: "-steps 0: want 1 to 1048576"},
		{args: []string{"-steps", "-3"}, err: "-steps -3: want 1 to 1048576"},
		{args: []string{"-rounds", "0"}, err: "-rounds 0: want 1 to 1048576"},
		{args: []string{"-rounds", "1048577"}, err: "-rounds 1048577: want 1 to 1048576"},
		{args: []string{"-rounds", "9223372036854775807"}, err: "-rounds 9223372036854775807: want 1 to 1048576"},
		{args: []string{"-precision", "fp16"}, err: `-precision: precision "fp16" is not one of f32, bf16`},
		{args: []string{"-decode", "-precision", "bf16"}, err: "-precision is a flag of training (without -decode or -prefill) and -prefill only, not of -decode"},
		{args: []string{"-lr", "0"}, err: "-lr 0: want a learning rate above 0 (as a float32) and at most 1"},
		{args: []string{"-lr", "1e-50"}, err: "-lr 1e-50: want a learning rate above 0 (as a float32)"},
		{args: []string{"-lr", "1.0000001"}, err: "-lr 1.0000001: want a learning rate above 0 (as a float32) and at most 1"},
		{args: []string{"-lr", "Inf"}, err: "-lr +Inf: want a learning rate"},
		{args: []string{"-lr", "NaN"}, err: "-lr NaN: want a learning rate"},
		{args: []string{"extra"}, err: `unexpected argument "extra"`},
		{args: []string{"-steps", "many"}, err: `invalid value "many" for flag -steps: parse error (see trainbench -h)`},
		{args: []string{"-nosuchflag"}, err: "flag provided but not defined: -nosuchflag (see trainbench -h)"},
		{args: []string{"-threads", "99999999999999999999"}, err: `"99999999999999999999" is not a thread count`},
		{args: []string{"-batch", "100000"}, err: "-batch 100000: want 0 to 65536 (0 keeps the preset's)"},
		{args: []string{"-batch", "65537"}, err: "-batch 65537: want 0 to 65536"},
		{args: []string{"-block", "100000"}, err: "-block 100000: want 0 to 19999"},
		{args: []string{"-block", "20000"}, err: "-block 20000: want 0 to 19999"},
		{args: []string{"-layers", "100000"}, err: "-layers 100000: want 0 to 1024"},
		{args: []string{"-layers", "1025"}, err: "-layers 1025: want 0 to 1024"},
		{args: []string{"-width", "1000000"}, err: "-width 1000000: want 0 to 16384"},
		{args: []string{"-width", "16385"}, err: "-width 16385: want 0 to 16384"},
		{args: []string{"-heads", "100000", "-width", "100000"}, err: "-heads 100000: want 0 to 1024"},
		{args: []string{"-heads", "1025"}, err: "-heads 1025: want 0 to 1024"},
		{args: []string{"-heads", "-2"}, err: "-heads -2: want 0 to 1024"},
		{args: []string{"-vocab", "100000"}, err: "-vocab 100000: want 0 to 65536"},
		{args: []string{"-vocab", "65537"}, err: "-vocab 65537: want 0 to 65536"},
		{args: []string{"-width", "9223372036854775807", "-batch", "9223372036854775807"}, err: "-width 9223372036854775807: want 0 to 16384"},
		{args: []string{"-threads", "100000"}, err: "100000 is above the limit of 1024 threads"},
		{args: []string{"-threads", "1025"}, err: `-threads "1025": 1025 is above the limit of 1024 threads`},
		{args: []string{"-torch-threads", "1,5000"}, err: "5000 is above the limit of 1024 threads"},
		{args: []string{"-steps", "10000000"}, err: "-steps 10000000: want 1 to 1048576"},
		{args: []string{"-steps", "1048577"}, err: "-steps 1048577: want 1 to 1048576"},
		{args: []string{"-steps", "1048575", "-rounds", "1", "-threads", "1", "-torch-threads", "2"}, err: "-rounds 1 × 2 thread counts × (-steps 1048575 + 1) is 2097152 steps a side, above the limit of 1048576"},
		{args: []string{"-steps", "1048576", "-rounds", "1", "-threads", "1"}, err: "-rounds 1 × 1 thread counts × (-steps 1048576 + 1) is 1048577 steps a side, above the limit of 1048576"},
		{args: []string{"-steps", "100000", "-rounds", "100"}, err: "above the limit of 1048576"},
	} {
		o, err := parseOptions(tc.args, io.Discard)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.err)
			}
			// The command refuses it in one line, exit status 2.
			oneLine(t, tc.args, 2, tc.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.name != tc.name || o.cfg != tc.cfg || o.batch != tc.batch || !reflect.DeepEqual(o.threads, tc.threads) || !reflect.DeepEqual(o.torchThreads, tc.torch) {
			t.Errorf("%q: got %s %+v batch %d threads %v torch %v, want %s %+v batch %d threads %v torch %v",
				tc.args, o.name, o.cfg, o.batch, o.threads, o.torchThreads, tc.name, tc.cfg, tc.batch, tc.threads, tc.torch)
		}
	}
	// Every limit is accepted at itself.
	for _, args := range [][]string{
		{"-layers", "1024"}, {"-heads", "1024", "-width", "1024"}, {"-width", "16384"}, {"-block", "19999"},
		{"-batch", "65536"}, {"-vocab", "65536"}, {"-threads", "1024", "-torch-threads", "1,1024"},
		{"-steps", "1048575", "-rounds", "1", "-threads", "1"}, {"-rounds", "524288", "-steps", "1", "-threads", "1"},
		{"-lr", "1"}, {"-lr", "1e-40"},
	} {
		if _, err := parseOptions(args, io.Discard); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	if _, err := parseOptions([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

func TestParseReplies(t *testing.T) {
	for _, tc := range []struct {
		line string
		n    int
		want []float64
	}{
		{"ms 1.5 2 3.25", 3, []float64{1.5, 2, 3.25}},
		{"ms 1.5 2", 3, nil},
		{"ms 1.5 -2 3", 3, nil},
		{"ms 1.5 NaN 3", 3, nil},
		{"xs 1 2 3", 3, nil},
		{"error unknown command", 2, nil},
	} {
		got, err := parseMs(tc.line, tc.n)
		if (err == nil) != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseMs(%q, %d) = %v, %v; want %v", tc.line, tc.n, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		out   string
		pass  bool
		lines int
	}{
		{"check loss ok\ncheck PASS\n", true, 2},
		{"noise\ncheck loss FAIL\ncheck FAIL\n", false, 2},
		{"check PASS\ncheck loss late\n", false, 2},
		{"", false, 0},
	} {
		r := parseCheck(tc.out)
		if r.pass != tc.pass || len(r.lines) != tc.lines {
			t.Errorf("parseCheck(%q) = %v with %d lines, want %v with %d", tc.out, r.pass, len(r.lines), tc.pass, tc.lines)
		}
	}
}

func TestStepFlops(t *testing.T) {
	// Config a by hand: N = 768 rows, C = 128, T = 64, V = 65, 4 layers.
	fwd := 4*(24*768*128*128+2*12*64*65*128) + 2*768*128*65
	if got, want := stepFlops(presets["a"].cfg, 12), float64(3*fwd); got != want {
		t.Errorf("stepFlops(a) = %g, want %g", got, want)
	}
}

// samples returns n step times spread evenly over [lo, hi].
func samples(n int, lo, hi float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return s
}

func TestWriteTable(t *testing.T) {
	// FMA peak samples at 1 thread, one of them low; none at 2.
	peaks := &bench.Peaks{}
	for _, gf := range []float64{400, 250, 380} {
		peaks.Add(bench.PeakKey{ISA: "avx512", Threads: 1}, gf*1e9)
	}
	base := results{name: "a", cfg: presets["a"].cfg, batch: 12, threads: []int{1, 2}, isa: "avx512", peakName: "FMA peak", peaks: peaks}
	ours := map[int]*series{
		1: {ms: samples(9, 10, 14)},
		2: {ms: samples(9, 6, 8)},
	}
	flops1 := stepFlops(base.cfg, 12) / 12e6 // GFLOP/s at 12 ms: 318
	for _, tc := range []struct {
		name  string
		torch map[int]*series
		tt    []int
		rows  int
		want  []string // substrings of the output
		not   []string
	}{
		{name: "alone", rows: 2,
			want: []string{"| config | threads | simdgpt ms/step", "| a      | 1       | 12.00 (10.00–14.00) | 64000 ", fmt.Sprintf("| %.1f (%.0f%%) ", flops1, 100*flops1/400), "| 7.00 (6.00–8.00)", " (-)"},
			not:  []string{"torch", "best", "!"}},
		{name: "torch", tt: []int{1, 2, 4}, rows: 4,
			torch: map[int]*series{1: {ms: samples(9, 20, 28)}, 2: {ms: samples(9, 30, 40)}, 4: {ms: samples(9, 40, 50)}},
			want:  []string{"torch ms/step", "| 24.00 (20.00–28.00) ", "| 2.00× [", "| 4 ", "best: 2 vs 1", "3.43× [", "(79%) "},
			not:   []string{"!"},
		},
		{name: "torch, few steps", tt: []int{1, 2}, rows: 3,
			torch: map[int]*series{1: {ms: []float64{20, 24}}, 2: {ms: []float64{30}}},
			want:  []string{"| 4.29× (no CI: too few steps) "},
		},
	} {
		r := base
		r.ours, r.torch, r.torchThreads = ours, tc.torch, tc.tt
		var b bytes.Buffer
		r.writeTable(&b)
		out := b.String()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != tc.rows+2 {
			t.Errorf("%s: %d lines, want a header, a rule and %d rows:\n%s", tc.name, len(lines), tc.rows, out)
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
				t.Errorf("%s: line %q is not as wide as the header", tc.name, l)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", tc.name, w, out)
			}
		}
	}

	// Faster than every peak sample: printed as it is, marked, and the
	// note under the table.
	low := &bench.Peaks{}
	low.Add(bench.PeakKey{ISA: "avx512", Threads: 1}, 300e9)
	r := base
	r.ours, r.peaks = ours, low
	var b bytes.Buffer
	r.writeTable(&b)
	out := b.String()
	if want := fmt.Sprintf("| %.1f (%.0f%%%s) ", flops1, 100*flops1/300, bench.OverPeakMark); !strings.Contains(out, want) || !strings.HasSuffix(out, "|\n\n"+bench.OverPeakNote+"\n") {
		t.Errorf("above the peak: want %q and the note under the table in\n%s", want, out)
	}
}

// tinyRun parses tiny's options and makes its dataset in a temporary
// directory.
func tinyRun(t *testing.T, extra ...string) (options, string) {
	t.Helper()
	o, err := parseOptions(append(append([]string(nil), tiny...), extra...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return o, t.TempDir()
}

func TestRecordRoundTrip(t *testing.T) {
	o, dir := tinyRun(t)
	d, err := dataset(o.cfg.Vocab, o.seed, dir)
	if err != nil {
		t.Fatal(err)
	}
	tr, weights, err := newRun(o.cfg, d, o.batch, 1, o.lr, o.seed, o.precision, dir, checkWeights)
	if err != nil {
		t.Fatal(err)
	}
	init := append([]float32(nil), tr.Model.Params...)
	rec := recordStep(tr)
	if reflect.DeepEqual(init, rec.params) || rec.loss < 3 || rec.loss > 5 {
		t.Fatalf("the step did not train: loss %g, parameters unchanged: %v", rec.loss, reflect.DeepEqual(init, rec.params))
	}
	b, err := encodeRecord(o.cfg, o.batch, rec)
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float32{}
	for _, x := range ts {
		got[x.Name] = x.Data
	}
	for i, id := range rec.x {
		if got["batch.x"][i] != float32(id) || got["batch.y"][i] != float32(rec.y[i]) {
			t.Fatalf("batch row %d: %v %v, want %d %d", i, got["batch.x"][i], got["batch.y"][i], id, rec.y[i])
		}
	}
	for _, x := range o.cfg.Tensors() {
		if !reflect.DeepEqual(got["param."+x.Name], rec.params[x.Offset:x.Offset+x.Size()]) ||
			!reflect.DeepEqual(got["grad."+x.Name], rec.grads[x.Offset:x.Offset+x.Size()]) {
			t.Errorf("tensor %s did not round-trip", x.Name)
		}
	}
	if meta["loss"] == "" || meta["lr"] != f32String(rec.lr) {
		t.Errorf("metadata %v", meta)
	}

	// The script's reader and writer: gpt's checkpoint copied through
	// train_gpt.py decodes to the same tensors and metadata.
	python, script := pythonScript(t)
	if python == "" {
		t.Skip("no python3: the script's safetensors round trip is not tested")
	}
	copyPath := filepath.Join(dir, "copy.safetensors")
	if out, err := exec.Command(python, script, "--roundtrip", weights, copyPath).CombinedOutput(); err != nil {
		t.Fatalf("train_gpt.py --roundtrip: %v\n%s", err, out)
	}
	ck, err := gpt.Load(copyPath) // verifies the checksum of the data
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ck.Model.Params, init) || ck.Model.Config != tr.Model.Config {
		t.Error("the checkpoint copied by train_gpt.py holds other weights")
	}
}

// pythonScript returns the interpreter and the script, or "" when there is
// no python3. It skips the test under -short: CI runs -short under
// qemu-user, whose fork can deadlock in the child (starting python from an
// emulated test binary hangs the package until its timeout); the default
// run, which CI also makes, runs these tests.
func pythonScript(t *testing.T) (python, script string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: tests that start python run without -short")
	}
	python = defaultPython()
	if _, err := exec.LookPath(python); err != nil {
		return "", ""
	}
	script, err := findScript("", "train_gpt.py")
	if err != nil {
		t.Fatal(err)
	}
	return python, script
}

// needTorch skips the test when python3 cannot import torch (CI installs
// python3-torch, so it runs there).
func needTorch(t *testing.T) (python, script string) {
	t.Helper()
	python, script = pythonScript(t)
	if python == "" {
		t.Skip("no python3: apt-get install python3-torch to run this test")
	}
	torchOnce.Do(func() { _, torchErr = torchVersion(context.Background(), python) })
	if torchErr != nil {
		t.Skipf("%s cannot import torch (%v): apt-get install python3-torch to run this test", python, torchErr)
	}
	return python, script
}

// torchErr is whether python3 could import torch, asked once for all tests.
var (
	torchOnce sync.Once
	torchErr  error
)

func TestCheckAgainstTorch(t *testing.T) {
	python, script := needTorch(t)
	o, dir := tinyRun(t)
	d, err := dataset(o.cfg.Vocab, o.seed, dir)
	if err != nil {
		t.Fatal(err)
	}
	args, err := prepareCheck(o, script, d, dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := execCheck(context.Background(), python, args, nil, time.Hour, os.Stderr)
	if err != nil || !res.pass || len(res.lines) != 4 {
		t.Fatalf("check: %v, pass %v:\n%s", err, res.pass, strings.Join(res.lines, "\n"))
	}
	// The script's own copy of the parameters after its step agrees with
	// gpt's too, within 2·lr (the bound of its check).
	ts, _, err := safetensors.Decode(mustRead(t, filepath.Join(dir, checkTorch)))
	if err != nil {
		t.Fatal(err)
	}
	ours := mustRead(t, filepath.Join(dir, checkExpect))
	exp, _, err := safetensors.Decode(ours)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{}
	for _, x := range exp {
		want[x.Name] = x.Data
	}
	if len(ts) != len(o.cfg.Tensors()) {
		t.Fatalf("train_gpt.py wrote %d tensors, want %d", len(ts), len(o.cfg.Tensors()))
	}
	for _, x := range ts {
		for i, v := range x.Data {
			if math.Abs(float64(v-want["param."+x.Name][i])) > 2.1*o.lr {
				t.Fatalf("%s[%d]: torch %g, gpt %g", x.Name, i, v, want["param."+x.Name][i])
			}
		}
	}

	// A parameter moved by 10·lr in gpt's record fails the check.
	var bad []safetensors.Tensor
	for _, x := range exp {
		if x.Name == "param.h.1.mlp.w_fc" {
			x.Data[7] += float32(10 * o.lr)
		}
		bad = append(bad, x)
	}
	b, err := safetensors.Encode(bad, map[string]string{"loss": "4.2", "lr": f32String(float32(o.lr))})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkExpect), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = execCheck(context.Background(), python, args, nil, time.Hour, io.Discard)
	if err != nil || res.pass {
		t.Fatalf("a tampered record: %v, pass %v:\n%s", err, res.pass, strings.Join(res.lines, "\n"))
	}
	for _, w := range []string{"check loss", "FAIL", "check params", "(h.1.mlp.w_fc)"} {
		if !strings.Contains(strings.Join(res.lines, "\n"), w) {
			t.Errorf("no %q in the tampered check's report:\n%s", w, strings.Join(res.lines, "\n"))
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunWithoutTorch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-python")
	args := append(append([]string(nil), tiny...), "-python", missing, "-steps", "2", "-rounds", "1", "-threads", "1", "-check")
	var out, errOut bytes.Buffer
	if st := run(args, &out, &errOut); st != 0 {
		t.Fatalf("exit status %d:\n%s%s", st, out.String(), errOut.String())
	}
	s := out.String()
	for _, w := range []string{noTorchLine + "\n", "cpu: ", "model: config custom: 2 layers, 2 heads, width 32, block 16, batch 4, vocab 65", "| custom | 1 "} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in\n%s", w, s)
		}
	}
	if strings.Contains(s, "torch ms/step") || strings.Contains(s, "check ") {
		t.Errorf("torch columns or a check without torch:\n%s", s)
	}
	// The FMA peak of the run and the share of it, when the kernels have
	// a peak loop.
	if impl := kernels.Default(); impl.FMAPeakLoop(1) > 0 {
		if !strings.Contains(s, "FMA peak ("+impl.Name()+" FMAPeakLoop") || !strings.Contains(s, "the largest sample): 1 thread(s) ") ||
			!regexp.MustCompile(`\| custom \| 1 .*\| [0-9.]+ \([0-9]+%!?\) +\|\n`).MatchString(s) {
			t.Errorf("no FMA peak line or share of it in\n%s", s)
		}
	} else if !strings.Contains(s, "FMA peak: none") || !strings.Contains(s, " (-) ") {
		t.Errorf("no line saying there is no FMA peak in\n%s", s)
	}
	out.Reset()
	errOut.Reset()
	if st := run(append(args, "-require-torch"), &out, &errOut); st != 1 || !strings.Contains(errOut.String(), "-require-torch") {
		t.Errorf("-require-torch without torch: exit status %d, stderr %q", st, errOut.String())
	}
	if st := run([]string{"-config", "z"}, &out, &errOut); st != 2 {
		t.Errorf("bad flag: exit status %d, want 2", st)
	}
}

// TestRunMemory checks that a run whose training would not fit in the
// memory available is refused with one line and exit status 1 before
// anything is allocated, for the presets in little memory and for shapes
// within the limits but far beyond the machine.
func TestRunMemory(t *testing.T) {
	for _, c := range []struct {
		mem  string
		args []string
	}{
		{"1000000", []string{"-config", "a"}},
		{"100000000", []string{"-config", "b"}},
		{"", []string{"-batch", "65536", "-block", "16384", "-width", "4096"}},
		{"", []string{"-layers", "1024", "-width", "16384", "-heads", "16"}},
	} {
		if c.mem != "" {
			t.Setenv(gpt.MemoryEnv, c.mem)
		} else {
			os.Unsetenv(gpt.MemoryEnv)
		}
		var out, errOut bytes.Buffer
		args := append(c.args, "-no-torch", "-steps", "1", "-rounds", "1", "-threads", "1")
		st := run(args, &out, &errOut)
		if e := errOut.String(); st != 1 || strings.Count(e, "\n") != 1 || !strings.Contains(e, "needs about") || !strings.Contains(e, "available") {
			t.Errorf("%s=%s %q: exit status %d, stderr %q; want 1 and one line saying what needs how much memory", gpt.MemoryEnv, c.mem, args, st, e)
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed %q before refusing", args, out.String())
		}
	}
}

func TestRunWithTorch(t *testing.T) {
	needTorch(t)
	args := append(append([]string(nil), tiny...), "-steps", "2", "-rounds", "2", "-check", "-require-torch")
	var out, errOut bytes.Buffer
	if st := run(args, &out, &errOut); st != 0 {
		t.Fatalf("exit status %d:\n%s%s", st, out.String(), errOut.String())
	}
	s := out.String()
	for _, w := range []string{"torch: ", "check PASS\n", "torch ms/step", "| custom | 1 ", "| custom | 2 ", "best: ", "× ["} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in\n%s", w, s)
		}
	}
	if got := strings.Count(errOut.String(), "round "); got != 4 {
		t.Errorf("%d progress lines, want 2 rounds × 2 thread counts:\n%q\n%s", got, errOut.String(), s)
	}
}
