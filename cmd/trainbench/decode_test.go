package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt"
)

// tinyDecode is a small GPT-2-shaped model (one layer, a short
// vocabulary) and run for the tests that decode.
var tinyDecode = []string{"-decode", "-layers", "1", "-vocab", "512", "-ctx", "4,8", "-tokens", "3", "-rounds", "1", "-threads", "1"}

func TestParseDecodeOptions(t *testing.T) {
	gpt2 := gpt.Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
	two := gpt2
	two.Layers = 2
	for _, tc := range []struct {
		args    []string
		name    string
		cfg     gpt.Config
		ctxs    []int
		tokens  int
		threads []int
		weights gpt.Weights
		kv      attention.KVCache
		err     string // substring of the error; "" for none
	}{
		{args: []string{"-decode"}, name: "gpt2", cfg: gpt2, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-layers", "2", "-ctx", "16, 8,16", "-tokens", "4", "-threads", "2"}, name: "custom", cfg: two, ctxs: []int{16, 8}, tokens: 4, threads: []int{2}},
		{args: []string{"-decode", "-layers", "12", "-ctx", "992"}, name: "gpt2", cfg: gpt2, ctxs: []int{992}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-model", "x.safetensors", "-ctx", "2000"}, name: "gpt2", cfg: gpt2, ctxs: []int{2000}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-weights", "f32"}, name: "gpt2", cfg: gpt2, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}, weights: gpt.WeightsF32},
		{args: []string{"-decode", "-weights", "bf16"}, name: "gpt2", cfg: gpt2, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}, weights: gpt.WeightsBF16},
		{args: []string{"-decode", "-weights", "int8", "-layers", "2"}, name: "custom", cfg: two, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}, weights: gpt.WeightsInt8},
		{args: []string{"-decode", "-rounds", "1048576", "-ctx", "64", "-threads", "1", "-tokens", "1"}, name: "gpt2", cfg: gpt2, ctxs: []int{64}, tokens: 1, threads: []int{1}},
		{args: []string{"-decode", "-model", "m", "-ctx", "32768", "-tokens", "1048576", "-threads", "1", "-rounds", "1"}, name: "gpt2", cfg: gpt2, ctxs: []int{32768}, tokens: 1048576, threads: []int{1}},
		{args: []string{"-decode", "-layers", "1024", "-vocab", "65536", "-threads", "1024"}, name: "custom", cfg: gpt.Config{Vocab: 65536, BlockSize: 1024, Layers: 1024, Heads: 12, Width: 768, TieEmbeddings: true}, ctxs: []int{64, 512}, tokens: 32, threads: []int{1024}},
		{args: []string{"-decode", "-weights", "int8", "-kv-cache", "bf16"}, name: "gpt2", cfg: gpt2, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}, weights: gpt.WeightsInt8, kv: attention.KVBF16},
		{args: []string{"-decode", "-kv-cache", "f32"}, name: "gpt2", cfg: gpt2, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-kv-cache", "q8"}, err: `-kv-cache "q8": want f32 or bf16`},
		{args: []string{"-prefill", "-kv-cache", "bf16"}, err: "-kv-cache is a flag of -decode only, not of -prefill"},
		{args: []string{"-kv-cache", "bf16"}, err: "-kv-cache is a flag of -decode only, not of training"},
		{args: []string{"-decode", "-weights", "fp16"}, err: `-weights "fp16": want f32, bf16 or int8`},
		{args: []string{"-decode", "-weights", ""}, err: `-weights "": want f32, bf16 or int8`},
		{args: []string{"-decode", "-weights", "BF16"}, err: `-weights "BF16": want f32, bf16 or int8`},
		{args: []string{"-decode", "-ctx", "993"}, err: "-ctx 993 and -tokens 32: the context would grow to 1025 tokens, beyond GPT-2's 1024"},
		{args: []string{"-decode", "-ctx", "0"}, err: `"0" is not a prompt length`},
		{args: []string{"-decode", "-ctx", "64,x"}, err: `"x" is not a prompt length`},
		{args: []string{"-decode", "-ctx", ""}, err: "-ctx: no prompt length"},
		{args: []string{"-decode", "-ctx", "100000", "-model", "m"}, err: "100000 is above the limit of 32768"},
		{args: []string{"-decode", "-tokens", "0"}, err: "-tokens 0: want 1 to 1048576"},
		{args: []string{"-decode", "-tokens", "1048577", "-model", "m"}, err: "-tokens 1048577: want 1 to 1048576"},
		{args: []string{"-decode", "-tokens", "9223372036854775807", "-ctx", "64"}, err: "-tokens 9223372036854775807: want 1 to 1048576"},
		{args: []string{"-decode", "-rounds", "0"}, err: "-rounds 0: want 1 to 1048576"},
		{args: []string{"-decode", "-rounds", "1048577"}, err: "-rounds 1048577: want 1 to 1048576"},
		{args: []string{"-decode", "-rounds", "4611686018427387904", "-ctx", "64", "-threads", "1", "-tokens", "4"}, err: "-rounds 4611686018427387904: want 1 to 1048576"},
		{args: []string{"-decode", "-rounds", "100000", "-ctx", "64"}, err: "-rounds 100000 × 1 contexts × 2 thread counts × -tokens 32 is 6400000 timed tokens a side, above the limit of 1048576"},
		{args: []string{"-decode", "-rounds", "1048576", "-ctx", "64", "-threads", "1", "-tokens", "2"}, err: "is 2097152 timed tokens a side, above the limit of 1048576"},
		{args: []string{"-decode", "-layers", "-1"}, err: "-layers -1: want 0 to 1024 (0 keeps GPT-2 124M's)"},
		{args: []string{"-decode", "-layers", "1025"}, err: "-layers 1025: want 0 to 1024"},
		{args: []string{"-decode", "-vocab", "100000"}, err: "-vocab 100000: want 0 to 65536"},
		{args: []string{"-decode", "-vocab", "65537"}, err: "-vocab 65537: want 0 to 65536"},
		{args: []string{"-decode", "-ctx", "32769", "-model", "m"}, err: `-ctx "32769": 32769 is above the limit of 32768`},
		{args: []string{"-decode", "-threads", "1025"}, err: `-threads "1025": 1025 is above the limit of 1024 threads`},
		{args: []string{"-decode", "-model", "m", "-layers", "2"}, err: "-model's file has its own shape"},
		{args: []string{"-decode", "-threads", "0"}, err: `"0" is not a thread count`},
		{args: []string{"-decode", "-threads", ""}, err: "-threads: no thread count"},
		{args: []string{"-decode", "-steps", "3"}, err: "-steps is a flag of training (without -decode or -prefill) only, not of -decode"},
		{args: []string{"-decode", "-config", "b"}, err: "-config is a flag of training"},
		{args: []string{"-decode", "-torch-threads", "4"}, err: "-torch-threads is a flag of training"},
		{args: []string{"-ctx", "64"}, err: "-ctx is a flag of -decode only"},
		{args: []string{"-model", "m"}, err: "-model is a flag of -decode and -prefill only, not of training"},
		{args: []string{"-weights", "bf16"}, err: "-weights is a flag of -decode and -prefill only, not of training"},
		{args: []string{"-config", "b", "-weights", "f32"}, err: "-weights is a flag of -decode and -prefill only, not of training"},
		{args: []string{"-decode", "extra"}, err: `unexpected argument "extra"`},
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
		if !o.decode || o.name != tc.name || o.cfg != tc.cfg || !reflect.DeepEqual(o.ctxs, tc.ctxs) || o.tokens != tc.tokens || !reflect.DeepEqual(o.threads, tc.threads) || o.weights != tc.weights || o.kv != tc.kv {
			t.Errorf("%q: got decode %v %s %+v ctx %v tokens %d threads %v weights %v kv %v, want %s %+v ctx %v tokens %d threads %v weights %v kv %v",
				tc.args, o.decode, o.name, o.cfg, o.ctxs, o.tokens, o.threads, o.weights, o.kv, tc.name, tc.cfg, tc.ctxs, tc.tokens, tc.threads, tc.weights, tc.kv)
		}
	}
}

func TestParseDecodeReply(t *testing.T) {
	for _, tc := range []struct {
		line string
		n    int
		ms   []float64
		toks []int32
	}{
		{"ms 1.5 2 tokens 7 8 9", 2, []float64{1.5, 2}, []int32{7, 8, 9}},
		{"ms 3 tokens 0 50256", 1, []float64{3}, []int32{0, 50256}},
		{"ms 1.5 2 tokens 7 8", 2, nil, nil},
		{"ms 1.5 tokens 7 8 9", 2, nil, nil},
		{"ms 1.5 2 tokens 7 -8 9", 2, nil, nil},
		{"ms 1.5 2 tokens 7 x 9", 2, nil, nil},
		{"ms 1.5 2", 2, nil, nil},
		{"error context of 1100 tokens beyond the model's 1024", 2, nil, nil},
	} {
		ms, toks, err := parseDecodeReply(tc.line, tc.n)
		if (err == nil) != (tc.ms != nil) || !reflect.DeepEqual(ms, tc.ms) || !reflect.DeepEqual(toks, tc.toks) {
			t.Errorf("parseDecodeReply(%q, %d) = %v, %v, %v; want %v, %v", tc.line, tc.n, ms, toks, err, tc.ms, tc.toks)
		}
	}
}

func TestDecodeTable(t *testing.T) {
	// Three rounds of three timed tokens; {64, 1}'s rounds have median
	// tokens of 42.5, 50 and 57.5 ms (11.8, 10 and 8.7 GB/s), against 25,
	// 20 and 30 GB/s: 47%, 50% and 29% by round.
	// With the cache: 100 MB more at ctx 64, 600 at 512 (1.2 and 2.2
	// times the bytes).
	base := decodeResults{ctxs: []int{64, 512}, threads: []int{1, 2}, weightBytes: 500e6, bandwidth: map[int][]float64{1: {25, 20, 30}, 2: {40, 50, 45}}, timed: 3,
		cacheBytes: map[int]float64{64: 100e6, 512: 600e6},
		ours: map[decodeKey][]float64{
			{64, 1}: samples(9, 40, 60), {64, 2}: samples(9, 20, 30),
			{512, 1}: samples(9, 45, 55), {512, 2}: samples(9, 25, 35),
		}}
	torch := map[decodeKey][]float64{
		{64, 1}: samples(9, 90, 110), {64, 2}: samples(9, 40, 60),
		{512, 1}: samples(9, 100, 100), {512, 2}: {50},
	}
	for _, tc := range []struct {
		name       string
		torch      map[decodeKey][]float64
		torchBytes float64
		want       []string
		not        []string
	}{
		{name: "alone",
			want: []string{"| ctx | threads | simdgpt ms/token", "| 64  | 1       | 50.00 (40.00–60.00) | 20.0 ", "| 10.0 (40%) ", "| 512 | 2 ", "| 16.7 (37%) ",
				"simdgpt % read bw by round", "| 10.0 (40%)               | 47% [29–50] ", "| with cache ", "| 56% [35–60] ", "| 95% [68–110] "},
			not: []string{"torch"}},
		{name: "torch", torch: torch, torchBytes: 500e6,
			want: []string{"torch ms/token", "| 100.00 (90.00–110.00) ", "| 5.0 (20%) ", "| 2.00× [", "| 1.67× (no CI: too few steps) ", "| 47% [29–50] "}},
		// Torch's matrices in another format than ours (bf16 against int8):
		// its GB/s from its own bytes a token.
		{name: "torch bytes", torch: torch, torchBytes: 900e6,
			want: []string{"| 10.0 (40%) ", "| 9.0 (36%) ", "| 18.0 (40%) "},
			not:  []string{"| 5.0 (20%) "}},
	} {
		r := base
		r.torch, r.torchBytes = tc.torch, tc.torchBytes
		var b bytes.Buffer
		r.writeTable(&b)
		out := b.String()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 6 {
			t.Errorf("%s: %d lines, want a header, a rule and 4 rows:\n%s", tc.name, len(lines), out)
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
	if got, want := base.bandwidthSummary(), "1 thread(s) 25.0 GB/s, 2 thread(s) 45.0 GB/s (1.80× 1)"; got != want {
		t.Errorf("bandwidthSummary() = %q, want %q", got, want)
	}
	// Rounds with fewer tokens than timed, or no bandwidth, give no share.
	short := base
	short.bandwidth = map[int][]float64{1: {25, 0, 30}}
	for _, tc := range []struct {
		ms   []float64
		want []string // rounded shares
	}{
		{samples(9, 40, 60), []string{"47", "29"}}, // the second round has no bandwidth
		{samples(5, 40, 60), []string{"44"}},       // one whole round: median 45 ms
		{nil, nil},
	} {
		var got []string
		for _, v := range short.roundShares(tc.ms, 500e6, 1) {
			got = append(got, fmt.Sprintf("%.0f", v))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("roundShares(%v) = %v, want %v", tc.ms, got, tc.want)
		}
	}
}

// oneLine checks that a run failed with status want and exactly one line
// on stderr starting "trainbench: " and containing msg, and no stack.
func oneLine(t *testing.T, args []string, want int, msg string) {
	t.Helper()
	var out, errOut bytes.Buffer
	st := run(args, &out, &errOut)
	e := errOut.String()
	if st != want || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "trainbench: ") || !strings.Contains(e, msg) || strings.Contains(e, "goroutine") {
		t.Errorf("%q: exit status %d, stderr %q; want %d and one line containing %q", args, st, e, want, msg)
	}
}

func TestRunDecodeWithoutTorch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-python")
	tiny := gpt.Config{Vocab: 512, BlockSize: 1024, Layers: 1, Heads: 12, Width: 768, TieEmbeddings: true}
	for _, tc := range []struct {
		weights gpt.Weights
		kv      string
		model   string // the end of the model line
	}{
		{gpt.WeightsF32, "f32", "simdgpt's matrices f32\n"},
		{gpt.WeightsBF16, "f32", "simdgpt's matrices bf16 (gpt.Model.WithWeights)\n"},
		{gpt.WeightsInt8, "f32", "simdgpt's matrices int8, groups of 32 (gpt.Model.WithWeights)\n"},
		{gpt.WeightsInt8, "bf16", "simdgpt's matrices int8, groups of 32 (gpt.Model.WithWeights), key/value cache bf16 (gpt.Model.SetKVCache)\n"},
	} {
		args := append(append([]string(nil), tinyDecode...), "-python", missing, "-check", "-weights", tc.weights.String(), "-kv-cache", tc.kv)
		var out, errOut bytes.Buffer
		if st := run(args, &out, &errOut); st != 0 {
			t.Fatalf("%v: exit status %d:\n%s%s", tc.weights, st, out.String(), errOut.String())
		}
		s := out.String()
		mb := fmt.Sprintf("simdgpt %.1f MB\n", float64(gpt.TokenWeightBytes(tiny, tc.weights))/1e6)
		for _, w := range []string{noTorchLine + "\n", "cpu: ", "model: 1 layers, 12 heads, width 768, vocab 512, block 1024, tied head", tc.model, mb,
			"read bandwidth: ", "| ctx | threads | simdgpt ms/token ", "| 4   | 1       | ", "| 8   | 1       | "} {
			if !strings.Contains(s, w) {
				t.Errorf("%v: no %q in\n%s", tc.weights, w, s)
			}
		}
		if strings.Contains(s, "torch ms/token") || strings.Contains(s, "check ") || strings.Contains(s, "greedy") || strings.Contains(s, "torch: ") {
			t.Errorf("%v: torch columns, a check or a comparison of tokens without torch:\n%s", tc.weights, s)
		}
		if got := strings.Count(errOut.String(), "round "); got != 2 {
			t.Errorf("%v: %d progress lines, want 2 (one per context):\n%s", tc.weights, got, errOut.String())
		}
		oneLine(t, append(args, "-require-torch"), 1, "-require-torch")
	}
}

func TestRunDecodeBadInputs(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.safetensors")
	if err := os.WriteFile(garbage, []byte("not a checkpoint at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A valid GPT-2 file of block 1024, too short for a context of 1020
	// and 8 more tokens.
	small := gpt.Config{Vocab: 64, BlockSize: 1024, Layers: 1, Heads: 12, Width: 768, TieEmbeddings: true}
	good, err := writeGPT2(dir, small, 1)
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"-decode", "-no-torch", "-rounds", "1", "-threads", "1", "-tokens", "8"}
	with := func(extra ...string) []string { return append(append([]string(nil), base...), extra...) }
	for _, tc := range []struct {
		args   []string
		status int
		msg    string
	}{
		{with("-model", filepath.Join(dir, "missing.safetensors")), 1, "no such file"},
		{with("-model", garbage), 1, "gpt.LoadGPT2"},
		{with("-model", good, "-ctx", "1020"), 1, "-ctx 1020 and -tokens 8: the context would grow to 1028 tokens, beyond the model's 1024"},
		{with("-ctx", "1020"), 2, "beyond GPT-2's 1024"},
		{with("-ctx", "x"), 2, `"x" is not a prompt length`},
		{with("-steps", "3"), 2, "-steps is a flag of training"},
		{with("-weights", "fp16"), 2, `-weights "fp16": want f32, bf16 or int8`},
		{[]string{"-weights", "bf16", "-no-torch", "-steps", "1"}, 2, "-weights is a flag of -decode and -prefill only, not of training"},
	} {
		oneLine(t, tc.args, tc.status, tc.msg)
	}
	t.Setenv(gpt.MemoryEnv, "100000000")
	oneLine(t, with("-ctx", "8"), 1, "needs about")
}

func TestRunDecodeWithTorch(t *testing.T) {
	needTorch(t)
	for _, tc := range []struct {
		weights gpt.Weights
		kv      string
		rounds  string
		threads string
		want    []string
		not     []string
	}{
		{gpt.WeightsF32, "f32", "2", "1,2",
			[]string{"--dtype fp32)\n", "check ctx 4: logits", "check ctx 8: greedy tokens 9 of 9 agree", "| 8   | 2 ", "× [",
				"greedy tokens, ctx 8: simdgpt and torch agree on the first 4 of 4 in every round"},
			[]string{int8PeerLine}},
		// A bf16 cache on float32 weights: bf16 weights' bounds against
		// PyTorch's fp32.
		{gpt.WeightsF32, "bf16", "1", "1",
			[]string{"--dtype fp32)\n", "key/value cache bf16", fmt.Sprintf(" tol %g) ok\n", decodeLogitTolBF16), "torch, given the same context, picks the same at ", "| 8   | 1 "},
			[]string{int8PeerLine}},
		{gpt.WeightsBF16, "f32", "1", "1",
			[]string{"--dtype bf16)\n", fmt.Sprintf(" tol %g) ok\n", decodeLogitTolBF16), "torch, given the same context, picks the same at ",
				fmt.Sprintf("(tol %g) ok\n", 2*decodeLogitTolBF16), "| 8   | 1 "},
			[]string{int8PeerLine}},
		{gpt.WeightsInt8, "f32", "1", "1",
			[]string{"--dtype bf16)\n", int8PeerLine + "\n", fmt.Sprintf(" tol %g) ok\n", decodeLogitTolInt8), "torch, given the same context, picks the same at ",
				fmt.Sprintf("(tol %g) ok\n", 2*decodeLogitTolInt8), "| 8   | 1 "},
			nil},
	} {
		args := append(append([]string(nil), tinyDecode...), "-rounds", tc.rounds, "-threads", tc.threads, "-check", "-require-torch", "-weights", tc.weights.String(), "-kv-cache", tc.kv)
		var out, errOut bytes.Buffer
		if st := run(args, &out, &errOut); st != 0 {
			t.Fatalf("%v: exit status %d:\n%s%s", tc.weights, st, out.String(), errOut.String())
		}
		s := out.String()
		for _, w := range append([]string{"torch: ", "check PASS\n", "torch ms/token", "| 4   | 1 ", "simdgpt and torch agree on the first"}, tc.want...) {
			if !strings.Contains(s, w) {
				t.Errorf("%v: no %q in\n%s", tc.weights, w, s)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(s, w) {
				t.Errorf("%v: %q in\n%s", tc.weights, w, s)
			}
		}
		rounds, _ := strconv.Atoi(tc.rounds)
		if got, want := strings.Count(errOut.String(), "round "), rounds*2*len(strings.Split(tc.threads, ",")); got != want {
			t.Errorf("%v: %d progress lines, want %d (rounds × 2 contexts × thread counts):\n%s", tc.weights, got, want, errOut.String())
		}
	}
}

// fakeLogitsPeer answers gpt2_decode.py's "logits" requests with the file
// N.f32 of the directory it is given, N the number of tokens asked about.
const fakeLogitsPeer = `import os, sys
d = sys.argv[1]
print("ready 0 blas=other dtype=bf16", flush=True)
for line in sys.stdin:
    f = line.rstrip("\n").split(" ", 2)
    if f[0] == "quit":
        break
    if f[0] == "logits" and len(f) == 3:
        with open(os.path.join(d, "%d.f32" % len(f[1].split(","))), "rb") as src:
            data = src.read()
        with open(f[2], "wb") as dst:
            dst.write(data)
        print("ok %d" % (len(data) // 4), flush=True)
    else:
        print("error unknown command %r" % line.strip(), flush=True)
`

// TestDecodeCheckLowBit runs -check's comparison for bf16 weights against
// a peer (a Python script without torch) that answers with simdgpt's own
// logits on each context, changed as each case says: it must pass on
// them unchanged and fail on logits beyond the tolerance after the
// prompt, on a token of simdgpt's too far below the peer's largest logit
// at one step, and on too few steps where the peer picks simdgpt's token.
func TestDecodeCheckLowBit(t *testing.T) {
	python, _ := pythonScript(t)
	if python == "" {
		t.Skip("no python3")
	}
	cfg := gpt.Config{Vocab: 64, BlockSize: 32, Layers: 1, Heads: 2, Width: 64, TieEmbeddings: true}
	m, err := gpt.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = m.WithWeights(gpt.WeightsBF16); err != nil {
		t.Fatal(err)
	}
	s := m.NewSampler()
	prompt := []int32{3, 14, 15, 9}
	_, mine, err := decodeOurs(context.Background(), s, prompt, decodeCheckTokens)
	if err != nil {
		t.Fatal(err)
	}
	// ours[i] are simdgpt's logits after the prompt and mine[:i].
	var ours [][]float32
	for i := range mine {
		ctx := append(append([]int32(nil), prompt...), mine[:i]...)
		ours = append(ours, append([]float32(nil), s.Logits(ctx)...))
	}
	tol := decodeLogitTolBF16
	// raise makes token other the largest logit of lg by frac of its
	// largest |logit|.
	raise := func(lg []float32, other int, frac float64) {
		top, scale := float32(math.Inf(-1)), 0.0
		for _, v := range lg {
			top = max(top, v)
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		lg[other] = top + float32(frac*scale)
	}
	other := func(i int) int { return (int(mine[i]) + 1) % cfg.Vocab }
	for _, tc := range []struct {
		name   string
		change func(step int, lg []float32)
		want   []string // substrings of the report
	}{
		{"unchanged", func(int, []float32) {}, []string{"check PASS", "picks the same at 9 of 9 steps"}},
		{"logits off", func(step int, lg []float32) {
			if step == 0 {
				for i := range lg {
					lg[i] *= float32(1 + 2*tol) // the arg max stays
				}
			}
		}, []string{"check FAIL", fmt.Sprintf("tol %g) FAIL", tol), "picks the same at 9 of 9 steps", fmt.Sprintf("(tol %g) ok", 2*tol)}},
		{"one token far", func(step int, lg []float32) {
			if step == 3 {
				raise(lg, other(step), 3*tol)
			}
		}, []string{"check FAIL", fmt.Sprintf("tol %g) ok", tol), "picks the same at 8 of 9 steps", fmt.Sprintf("(tol %g) FAIL", 2*tol)}},
		{"most tokens near", func(step int, lg []float32) {
			if step >= 1 && step <= 5 {
				raise(lg, other(step), tol/2)
			}
		}, []string{"check FAIL", fmt.Sprintf("tol %g) ok", tol), "picks the same at 4 of 9 steps", fmt.Sprintf("(tol %g) FAIL", 2*tol)}},
	} {
		dir := t.TempDir()
		for i, lg := range ours {
			lg = append([]float32(nil), lg...)
			tc.change(i, lg)
			b := make([]byte, 4*len(lg))
			for j, v := range lg {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(v))
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.f32", len(prompt)+i)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		script := filepath.Join(dir, "peer.py")
		if err := os.WriteFile(script, []byte(fakeLogitsPeer), 0o644); err != nil {
			t.Fatal(err)
		}
		tp, err := startTorch(context.Background(), python, script, []string{dir}, os.Environ(), 0, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		lines, pass, err := decodeCheck(context.Background(), s, tp, map[int][]int32{len(prompt): prompt}, []int{len(prompt)}, dir, cfg.Vocab, gpt.WeightsBF16, attention.KVFloat32)
		tp.close()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		report := strings.Join(lines, "\n")
		if pass != (tc.name == "unchanged") {
			t.Errorf("%s: pass %v:\n%s", tc.name, pass, report)
		}
		for _, w := range tc.want {
			if !strings.Contains(report, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, report)
			}
		}
	}
}
