package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
)

// tinyPrefill is a small GPT-2-shaped model (one layer, a short
// vocabulary) and run for the tests that process prompts.
var tinyPrefill = []string{"-prefill", "-layers", "1", "-vocab", "512", "-prompt", "4,16", "-rounds", "2", "-threads", "1"}

func TestParsePrefillOptions(t *testing.T) {
	gpt2 := gpt.Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
	two := gpt2
	two.Layers = 2
	for _, tc := range []struct {
		args      []string
		name      string
		cfg       gpt.Config
		prompts   []int
		threads   []int
		weights   gpt.Weights
		precision gpt.Precision
		err       string // substring of the error; "" for none
	}{
		{args: []string{"-prefill"}, name: "gpt2", cfg: gpt2, prompts: []int{256, 512}, threads: []int{1, 2}},
		{args: []string{"-prefill", "-prompt", "256,512", "-threads", "1", "-precision", "bf16"}, name: "gpt2", cfg: gpt2, prompts: []int{256, 512}, threads: []int{1}, precision: gpt.PrecisionBF16},
		{args: []string{"-prefill", "-weights", "bf16", "-precision", "bf16"}, name: "gpt2", cfg: gpt2, prompts: []int{256, 512}, threads: []int{1, 2}, weights: gpt.WeightsBF16, precision: gpt.PrecisionBF16},
		{args: []string{"-prefill", "-weights", "int8", "-layers", "2", "-prompt", "16, 8,16"}, name: "custom", cfg: two, prompts: []int{16, 8}, threads: []int{1, 2}, weights: gpt.WeightsInt8},
		{args: []string{"-prefill", "-prompt", "1024", "-check"}, name: "gpt2", cfg: gpt2, prompts: []int{1024}, threads: []int{1, 2}},
		{args: []string{"-prefill", "-model", "m", "-prompt", "32768", "-threads", "1"}, name: "gpt2", cfg: gpt2, prompts: []int{32768}, threads: []int{1}},
		{args: []string{"-prefill", "-rounds", "1048576", "-prompt", "64", "-threads", "1"}, name: "gpt2", cfg: gpt2, prompts: []int{64}, threads: []int{1}},
		{args: []string{"-prefill", "-precision", "fp16"}, err: `-precision "fp16": want f32 or bf16`},
		{args: []string{"-prefill", "-precision", ""}, err: `-precision "": want f32 or bf16`},
		{args: []string{"-prefill", "-precision", "BF16"}, err: `-precision "BF16": want f32 or bf16`},
		{args: []string{"-prefill", "-weights", "fp16"}, err: `-weights "fp16": want f32, bf16 or int8`},
		{args: []string{"-prefill", "-weights", ""}, err: `-weights "": want f32, bf16 or int8`},
		{args: []string{"-prefill", "-prompt", "1025"}, err: "-prompt 1025: longer than GPT-2's 1024 tokens"},
		{args: []string{"-prefill", "-prompt", "0"}, err: `-prompt "0": "0" is not a prompt length`},
		{args: []string{"-prefill", "-prompt", "-256"}, err: `"-256" is not a prompt length`},
		{args: []string{"-prefill", "-prompt", "256,x"}, err: `"x" is not a prompt length`},
		{args: []string{"-prefill", "-prompt", ""}, err: "-prompt: no prompt length"},
		{args: []string{"-prefill", "-prompt", "32769", "-model", "m"}, err: `-prompt "32769": 32769 is above the limit of 32768`},
		{args: []string{"-prefill", "-rounds", "0"}, err: "-rounds 0: want 1 to 1048576"},
		{args: []string{"-prefill", "-rounds", "1048577"}, err: "-rounds 1048577: want 1 to 1048576"},
		{args: []string{"-prefill", "-rounds", "1048576", "-prompt", "64"}, err: "-rounds 1048576 × 1 prompt lengths × 2 thread counts is 2097152 timed prompts a side, above the limit of 1048576"},
		{args: []string{"-prefill", "-layers", "1025"}, err: "-layers 1025: want 0 to 1024"},
		{args: []string{"-prefill", "-vocab", "65537"}, err: "-vocab 65537: want 0 to 65536"},
		{args: []string{"-prefill", "-model", "m", "-layers", "2"}, err: "-model's file has its own shape"},
		{args: []string{"-prefill", "-threads", "0"}, err: `"0" is not a thread count`},
		{args: []string{"-prefill", "-threads", ""}, err: "-threads: no thread count"},
		{args: []string{"-prefill", "-threads", "1025"}, err: "1025 is above the limit of 1024 threads"},
		{args: []string{"-prefill", "-ctx", "64"}, err: "-ctx is a flag of -decode only, not of -prefill"},
		{args: []string{"-prefill", "-tokens", "4"}, err: "-tokens is a flag of -decode only, not of -prefill"},
		{args: []string{"-prefill", "-steps", "3"}, err: "-steps is a flag of training (without -decode or -prefill) only, not of -prefill"},
		{args: []string{"-prefill", "-config", "b"}, err: "-config is a flag of training (without -decode or -prefill) only, not of -prefill"},
		{args: []string{"-prefill", "-decode"}, err: "-decode and -prefill: one mode at a time"},
		{args: []string{"-decode", "-prefill=true"}, err: "-decode and -prefill: one mode at a time"},
		{args: []string{"-decode", "-prompt", "64"}, err: "-prompt is a flag of -prefill only, not of -decode"},
		{args: []string{"-prompt", "64"}, err: "-prompt is a flag of -prefill only, not of training"},
		{args: []string{"-prefill", "extra"}, err: `unexpected argument "extra"`},
	} {
		var stderr bytes.Buffer
		o, err := parseOptions(tc.args, &stderr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.err)
			} else if _, ok := err.(usageError); !ok {
				t.Errorf("%q: error %v is not a usage error (exit status 2)", tc.args, err)
			}
			oneLine(t, tc.args, 2, tc.err)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !o.prefill || o.decode || o.name != tc.name || o.cfg != tc.cfg || !reflect.DeepEqual(o.ctxs, tc.prompts) || !reflect.DeepEqual(o.threads, tc.threads) || o.weights != tc.weights || o.precision != tc.precision {
			t.Errorf("%q: got prefill %v decode %v %s %+v prompts %v threads %v weights %v precision %v, want %s %+v prompts %v threads %v weights %v precision %v",
				tc.args, o.prefill, o.decode, o.name, o.cfg, o.ctxs, o.threads, o.weights, o.precision, tc.name, tc.cfg, tc.prompts, tc.threads, tc.weights, tc.precision)
		}
	}
}

func TestParsePrefillReply(t *testing.T) {
	for _, tc := range []struct {
		line    string
		n       int
		ms, cpu []float64
	}{
		{"ms 1.5 2 cpu 1.25 0", 2, []float64{1.5, 2}, []float64{1.25, 0}},
		{"ms 300 cpu 290.5", 1, []float64{300}, []float64{290.5}},
		{"ms 1.5 2 cpu 1", 2, nil, nil},
		{"ms 1.5 cpu 1 2", 2, nil, nil},
		{"ms 1.5 2 cpu 1 -2", 2, nil, nil},
		{"ms 1.5 2 cpu 1 x", 2, nil, nil},
		{"ms 1.5 2 cpu 1 inf", 2, nil, nil},
		{"ms 1.5 2 cpu 1 NaN", 2, nil, nil},
		{"ms 0 2 cpu 1 1", 2, nil, nil},
		{"ms 1.5 2", 2, nil, nil},
		{"error tokens '': at least one", 1, nil, nil},
	} {
		got, err := parsePrefillReply(tc.line, tc.n)
		if (err == nil) != (tc.ms != nil) || !reflect.DeepEqual(got.ms, tc.ms) || !reflect.DeepEqual(got.cpu, tc.cpu) {
			t.Errorf("parsePrefillReply(%q, %d) = %+v, %v; want ms %v cpu %v", tc.line, tc.n, got, err, tc.ms, tc.cpu)
		}
	}
}

func TestPrefillTable(t *testing.T) {
	r := prefillResults{prompts: []int{256}, threads: []int{1},
		ours:  map[decodeKey]*prefillTimes{{256, 1}: {ms: []float64{200, 250, 300}, cpu: []float64{200, 100, 300}}},
		torch: map[decodeKey]*prefillTimes{{256, 1}: {ms: []float64{400, 500, 600}, cpu: []float64{300, 400, 300}}}}
	var b bytes.Buffer
	r.writeTable(&b)
	s := b.String()
	// ours: median 250 ms (1024 tokens/s), CPU 200 ms (1280/CPU-s);
	// torch 500 ms (512/s), CPU 300 (853); per round CPU ratios 1.5, 4, 1.
	for _, w := range []string{"| prompt | threads | simdgpt ms ", "| 256    | 1       | 250.00 (200.00–300.00) | 1024 ", "| 1280 ", "| 500.00 (400.00–600.00) | 512 ", "| 853 ", "| 1.50× [1.00–4.00] "} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in\n%s", w, s)
		}
	}
	r.torch = nil
	b.Reset()
	r.writeTable(&b)
	if s := b.String(); strings.Contains(s, "torch") || !strings.Contains(s, "| 1280 ") {
		t.Errorf("table without torch:\n%s", s)
	}
	for _, tc := range []struct {
		ours, torch []float64
		want        string
	}{
		{[]float64{1, 2}, []float64{2}, "-"},
		{nil, nil, "-"},
		{[]float64{0, 1}, []float64{1, 1}, "-"},
		{[]float64{2, 4}, []float64{2, 2}, "0.75× [0.50–1.00]"},
	} {
		if got := roundRatios(tc.ours, tc.torch); got != tc.want {
			t.Errorf("roundRatios(%v, %v) = %q, want %q", tc.ours, tc.torch, got, tc.want)
		}
	}
}

func TestTorchPrefillArgs(t *testing.T) {
	for _, tc := range []struct {
		w    gpt.Weights
		p    gpt.Precision
		args string
		tol  float64
	}{
		{gpt.WeightsF32, gpt.PrecisionF32, "--dtype fp32", decodeLogitTol},
		{gpt.WeightsF32, gpt.PrecisionBF16, "--dtype fp32 --autocast", prefillLogitTolBF16},
		{gpt.WeightsBF16, gpt.PrecisionF32, "--dtype bf16", decodeLogitTolBF16},
		{gpt.WeightsBF16, gpt.PrecisionBF16, "--dtype bf16", decodeLogitTolBF16},
		{gpt.WeightsInt8, gpt.PrecisionF32, "--dtype bf16", decodeLogitTolInt8},
		{gpt.WeightsInt8, gpt.PrecisionBF16, "--dtype bf16", decodeLogitTolInt8},
	} {
		args, _ := torchPrefillArgs(tc.w, tc.p)
		if got := strings.Join(args, " "); got != tc.args {
			t.Errorf("torchPrefillArgs(%v, %v) = %q, want %q", tc.w, tc.p, got, tc.args)
		}
		if got := prefillTol(tc.w, tc.p); got != tc.tol {
			t.Errorf("prefillTol(%v, %v) = %g, want %g", tc.w, tc.p, got, tc.tol)
		}
	}
}

func TestRunPrefillWithoutTorch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-python")
	for _, v := range [][]string{{"-weights", "f32"}, {"-precision", "bf16"}, {"-weights", "bf16", "-precision", "bf16"}, {"-weights", "int8"}} {
		args := append(append(append([]string(nil), tinyPrefill...), "-python", missing, "-check"), v...)
		var out, errOut bytes.Buffer
		if st := run(args, &out, &errOut); st != 0 {
			t.Fatalf("%v: exit status %d:\n%s%s", v, st, out.String(), errOut.String())
		}
		s := out.String()
		for _, w := range []string{noTorchLine + "\n", "cpu: ", "model: 1 layers, 12 heads, width 768, vocab 512, block 1024, tied head", "| prompt | threads | simdgpt ms ", "| 4      | 1       | ", "| 16     | 1       | "} {
			if !strings.Contains(s, w) {
				t.Errorf("%v: no %q in\n%s", v, w, s)
			}
		}
		if strings.Contains(s, "torch ms") || strings.Contains(s, "check ") || strings.Contains(s, "torch: ") {
			t.Errorf("%v: torch columns or a check without torch:\n%s", v, s)
		}
		if got := strings.Count(errOut.String(), "round "); got != 4 {
			t.Errorf("%v: %d progress lines, want 4 (2 rounds × 2 prompt lengths):\n%s", v, got, errOut.String())
		}
		oneLine(t, append(args, "-require-torch"), 1, "-require-torch")
	}
}

func TestRunPrefillBadInputs(t *testing.T) {
	dir := t.TempDir()
	small := gpt.Config{Vocab: 64, BlockSize: 1024, Layers: 1, Heads: 12, Width: 768, TieEmbeddings: true}
	good, err := writeGPT2(dir, small, 1)
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"-prefill", "-no-torch", "-rounds", "1", "-threads", "1"}
	with := func(extra ...string) []string { return append(append([]string(nil), base...), extra...) }
	for _, tc := range []struct {
		args   []string
		status int
		msg    string
	}{
		{with("-model", filepath.Join(dir, "missing.safetensors")), 1, "no such file"},
		{with("-model", good, "-prompt", "1025"), 1, "-prompt 1025: longer than the model's 1024 tokens"},
		{with("-prompt", "1025"), 2, "longer than GPT-2's 1024"},
		{with("-precision", "fp16"), 2, `-precision "fp16": want f32 or bf16`},
		{with("-weights", "int4"), 2, `-weights "int4": want f32, bf16 or int8`},
		{with("-tokens", "3"), 2, "-tokens is a flag of -decode only"},
		{with("-decode"), 2, "one mode at a time"},
	} {
		oneLine(t, tc.args, tc.status, tc.msg)
	}
	t.Setenv(gpt.MemoryEnv, "100000000")
	oneLine(t, with("-prompt", "8"), 1, "needs about")
}

// TestRunPrefillWithTorch runs -prefill -check against PyTorch in float32
// and under bf16 autocast: the peer each runs, the check's lines and the
// table's torch columns.
func TestRunPrefillWithTorch(t *testing.T) {
	needTorch(t)
	for _, tc := range []struct {
		flags []string
		peer  string
		tol   float64
	}{
		{[]string{"-weights", "f32"}, "--dtype fp32): fp32", decodeLogitTol},
		{[]string{"-precision", "bf16"}, "--dtype fp32 --autocast): fp32 weights under torch.autocast", prefillLogitTolBF16},
		// The peer of bf16 and int8 weights is -decode's (TestRunDecodeWithTorch).
	} {
		args := append(append(append([]string(nil), tinyPrefill...), "-check", "-require-torch"), tc.flags...)
		var out, errOut bytes.Buffer
		if st := run(args, &out, &errOut); st != 0 {
			t.Fatalf("%v: exit status %d:\n%s%s", tc.flags, st, out.String(), errOut.String())
		}
		s := out.String()
		for _, w := range []string{tc.peer, fmt.Sprintf("tol %g); next token", tc.tol), "check prompt 4: ", "check prompt 16: ", "check PASS\n", "| torch ms ", "| 16     | 1       | ", "× ["} {
			if !strings.Contains(s, w) {
				t.Errorf("%v: no %q in\n%s", tc.flags, w, s)
			}
		}
		if got := strings.Count(errOut.String(), " torch "); got != 4 {
			t.Errorf("%v: %d progress lines with torch, want 4:\n%s", tc.flags, got, errOut.String())
		}
	}
}
