package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

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
		err     string // substring of the error; "" for none
	}{
		{args: []string{"-decode"}, name: "gpt2", cfg: gpt2, ctxs: []int{64, 512}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-layers", "2", "-ctx", "16, 8,16", "-tokens", "4", "-threads", "2"}, name: "custom", cfg: two, ctxs: []int{16, 8}, tokens: 4, threads: []int{2}},
		{args: []string{"-decode", "-layers", "12", "-ctx", "992"}, name: "gpt2", cfg: gpt2, ctxs: []int{992}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-model", "x.safetensors", "-ctx", "2000"}, name: "gpt2", cfg: gpt2, ctxs: []int{2000}, tokens: 32, threads: []int{1, 2}},
		{args: []string{"-decode", "-ctx", "993"}, err: "-ctx 993 and -tokens 32: the context would grow to 1025 tokens, beyond GPT-2's 1024"},
		{args: []string{"-decode", "-ctx", "0"}, err: `"0" is not a prompt length`},
		{args: []string{"-decode", "-ctx", "64,x"}, err: `"x" is not a prompt length`},
		{args: []string{"-decode", "-ctx", ""}, err: "-ctx: no prompt length"},
		{args: []string{"-decode", "-ctx", "100000", "-model", "m"}, err: "100000 is above the limit of 32768"},
		{args: []string{"-decode", "-tokens", "0"}, err: "-tokens 0 and -rounds 5 must be at least 1"},
		{args: []string{"-decode", "-rounds", "0"}, err: "-tokens 32 and -rounds 0 must be at least 1"},
		{args: []string{"-decode", "-rounds", "100000", "-ctx", "64"}, err: "above the limit of 1048576 timed tokens"},
		{args: []string{"-decode", "-layers", "-1"}, err: "must be positive"},
		{args: []string{"-decode", "-vocab", "100000"}, err: "Config.Vocab = 100000 is above the limit of 65536"},
		{args: []string{"-decode", "-model", "m", "-layers", "2"}, err: "-model's file has its own shape"},
		{args: []string{"-decode", "-threads", "0"}, err: `"0" is not a thread count`},
		{args: []string{"-decode", "-threads", ""}, err: "-threads: no thread count"},
		{args: []string{"-decode", "-steps", "3"}, err: "-steps is a flag of training (without -decode), not of -decode"},
		{args: []string{"-decode", "-config", "b"}, err: "-config is a flag of training"},
		{args: []string{"-decode", "-torch-threads", "4"}, err: "-torch-threads is a flag of training"},
		{args: []string{"-ctx", "64"}, err: "-ctx is a flag of -decode only"},
		{args: []string{"-model", "m"}, err: "-model is a flag of -decode only"},
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
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !o.decode || o.name != tc.name || o.cfg != tc.cfg || !reflect.DeepEqual(o.ctxs, tc.ctxs) || o.tokens != tc.tokens || !reflect.DeepEqual(o.threads, tc.threads) {
			t.Errorf("%q: got decode %v %s %+v ctx %v tokens %d threads %v, want %s %+v ctx %v tokens %d threads %v",
				tc.args, o.decode, o.name, o.cfg, o.ctxs, o.tokens, o.threads, tc.name, tc.cfg, tc.ctxs, tc.tokens, tc.threads)
		}
	}
}

func TestDecodeWeightBytes(t *testing.T) {
	gpt2 := gpt.Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
	untied := gpt2
	untied.TieEmbeddings = false
	for _, tc := range []struct {
		cfg  gpt.Config
		want float64
	}{
		// GPT-2 124M: 124,439,808 parameters, 1023 rows of wpe unread.
		{gpt2, 4 * (124439808 - 1023*768)},
		// Untied: w_lm and b_lm added, 50256 rows of wte unread.
		{untied, 4 * (124439808 + 768*50257 + 50257 - 1023*768 - 50256*768)},
	} {
		if got := decodeWeightBytes(tc.cfg); got != tc.want {
			t.Errorf("decodeWeightBytes(%+v) = %.0f, want %.0f", tc.cfg, got, tc.want)
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
	base := decodeResults{ctxs: []int{64, 512}, threads: []int{1, 2}, weightBytes: 500e6, bandwidth: []float64{25, 20, 30},
		ours: map[decodeKey][]float64{
			{64, 1}: samples(9, 40, 60), {64, 2}: samples(9, 20, 30),
			{512, 1}: samples(9, 45, 55), {512, 2}: samples(9, 25, 35),
		}}
	for _, tc := range []struct {
		name  string
		torch map[decodeKey][]float64
		want  []string
		not   []string
	}{
		{name: "alone",
			want: []string{"| ctx | threads | simdgpt ms/token", "| 64  | 1       | 50.00 (40.00–60.00) | 20.0 ", "| 10.0 (40%) ", "| 512 | 2 ", "| 16.7 (67%) "},
			not:  []string{"torch"}},
		{name: "torch",
			torch: map[decodeKey][]float64{
				{64, 1}: samples(9, 90, 110), {64, 2}: samples(9, 40, 60),
				{512, 1}: samples(9, 100, 100), {512, 2}: {50},
			},
			want: []string{"torch ms/token", "| 100.00 (90.00–110.00) ", "| 5.0 (20%) ", "| 2.00× [", "| 1.67× (no CI: too few steps) "}},
	} {
		r := base
		r.torch = tc.torch
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
	args := append(append([]string(nil), tinyDecode...), "-python", missing, "-check")
	var out, errOut bytes.Buffer
	if st := run(args, &out, &errOut); st != 0 {
		t.Fatalf("exit status %d:\n%s%s", st, out.String(), errOut.String())
	}
	s := out.String()
	for _, w := range []string{noTorchLine + "\n", "cpu: ", "model: 1 layers, 12 heads, width 768, vocab 512, block 1024, tied head",
		"read bandwidth: ", "| ctx | threads | simdgpt ms/token ", "| 4   | 1       | ", "| 8   | 1       | "} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in\n%s", w, s)
		}
	}
	if strings.Contains(s, "torch ms/token") || strings.Contains(s, "check ") || strings.Contains(s, "greedy") {
		t.Errorf("torch columns, a check or a comparison of tokens without torch:\n%s", s)
	}
	if got := strings.Count(errOut.String(), "round "); got != 2 {
		t.Errorf("%d progress lines, want 2 (one per context):\n%s", got, errOut.String())
	}
	oneLine(t, append(args, "-require-torch"), 1, "-require-torch")
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
	} {
		oneLine(t, tc.args, tc.status, tc.msg)
	}
	t.Setenv(gpt.MemoryEnv, "100000000")
	oneLine(t, with("-ctx", "8"), 1, "needs about")
}

func TestRunDecodeWithTorch(t *testing.T) {
	needTorch(t)
	args := append(append([]string(nil), tinyDecode...), "-rounds", "2", "-threads", "1,2", "-check", "-require-torch")
	var out, errOut bytes.Buffer
	if st := run(args, &out, &errOut); st != 0 {
		t.Fatalf("exit status %d:\n%s%s", st, out.String(), errOut.String())
	}
	s := out.String()
	for _, w := range []string{"torch: ", "check ctx 4: logits", "check ctx 8: greedy tokens 9 of 9 agree", "check PASS\n", "torch ms/token",
		"| 4   | 1 ", "| 8   | 2 ", "× [", "greedy tokens, ctx 8: simdgpt and torch agree on the first 4 of 4 in every round"} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in\n%s", w, s)
		}
	}
	if got := strings.Count(errOut.String(), "round "); got != 8 {
		t.Errorf("%d progress lines, want 2 rounds × 2 contexts × 2 thread counts:\n%s", got, errOut.String())
	}
}
