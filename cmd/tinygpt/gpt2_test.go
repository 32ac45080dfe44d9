package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
)

// gpt2Fixture is a random GPT-2-shaped model written in both formats, each
// with tokenizer files beside it.
type gpt2Fixture struct {
	m         *gpt.Model
	hfDir     string // model.safetensors, config.json, vocab.json, merges.txt
	llmcBin   string // gpt2_test.bin, with encoder.json and vocab.bpe beside it
	llmcOnly  string // gpt2_test.bin, with only gpt2_tokenizer.bin beside it
	noTok     string // model.safetensors and config.json alone
	tokDir    string // encoder.json and vocab.bpe alone
	dir, text string // the fixture's root; a text file of about 2000 tokens
}

func newGPT2Fixture(t *testing.T) *gpt2Fixture {
	t.Helper()
	dir := t.TempDir()
	f := &gpt2Fixture{m: testGPT2(t, 11), dir: dir, hfDir: filepath.Join(dir, "hf"), llmcBin: filepath.Join(dir, "llmc", "gpt2_test.bin"),
		llmcOnly: filepath.Join(dir, "llmconly", "gpt2_test.bin"), noTok: filepath.Join(dir, "notok"), tokDir: filepath.Join(dir, "tok"),
		text: filepath.Join(dir, "text.txt")}
	writeHF(t, f.hfDir, f.m)
	writeBPE(t, f.hfDir, true)
	writeLLMC(t, f.llmcBin, f.m)
	writeBPE(t, filepath.Dir(f.llmcBin), false)
	writeLLMC(t, f.llmcOnly, f.m)
	writeLlmcTokenizer(t, filepath.Dir(f.llmcOnly))
	writeHF(t, f.noTok, f.m)
	writeBPE(t, f.tokDir, false)
	mustWrite(t, f.text, []byte(strings.Repeat("hello world, the world of 中文 hello.<|endoftext|>", 60)))
	return f
}

// greedy returns what sample prints for prompt at temperature 0 (or with
// o), computed on the model directly: the prompt and the decoded tokens.
func expectedSample(t *testing.T, m *gpt.Model, prompt string, n int, o gpt.SampleOptions, seed uint64) string {
	t.Helper()
	tok := testTokenizer(t)
	var ids []int32
	if prompt == "" {
		ids = []int32{int32(tok.EOT())}
	} else {
		for _, id := range tok.EncodeWithSpecial(prompt) {
			ids = append(ids, int32(id))
		}
	}
	var out []int
	err := m.NewSampler().GenerateWith(ids, n, o, rng.New(seed), func(id int32) error { out = append(out, int(id)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	b, err := tok.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return prompt + string(b) + "\n"
}

// TestGPT2Sample samples from the model in both formats and through both
// tokenizer file layouts: the output is the prompt and the tokens the
// model draws itself from the prompt's BPE tokens, decoded (greedy, with
// top-k and with top-p); llm.c's tokenizer file alone decodes an
// unprompted sample.
func TestGPT2Sample(t *testing.T) {
	f := newGPT2Fixture(t)
	const prompt = "hello world 中"
	for _, c := range []struct {
		name string
		args []string
		o    gpt.SampleOptions
		seed uint64
		kv   attention.KVCache
	}{
		{"hf dir greedy", []string{"--checkpoint", f.hfDir, "--temperature", "0"}, gpt.SampleOptions{}, 1, attention.KVFloat32},
		{"hf file top-k", []string{"--checkpoint", filepath.Join(f.hfDir, gpt.HFFile), "--top_k", "5", "--seed", "4"}, gpt.SampleOptions{Temperature: 1, TopK: 5}, 4, attention.KVFloat32},
		{"llmc top-p", []string{"--checkpoint", f.llmcBin, "--top_p", "0.6", "--seed", "5"}, gpt.SampleOptions{Temperature: 1, TopP: 0.6}, 5, attention.KVFloat32},
		{"tokenizer_dir", []string{"--checkpoint", f.noTok, "--tokenizer_dir", f.tokDir, "--temperature", "0.8", "--top_p", "0.9", "--top_k", "20"}, gpt.SampleOptions{Temperature: 0.8, TopK: 20, TopP: 0.9}, 1, attention.KVFloat32},
		{"bf16 cache", []string{"--checkpoint", f.hfDir, "--top_k", "5", "--seed", "4", "--kv_cache", "bf16"}, gpt.SampleOptions{Temperature: 1, TopK: 5}, 4, attention.KVBF16},
	} {
		args := append([]string{"sample", "--prompt", prompt, "-n", "40"}, c.args...)
		st, out, errs := runCmd(args...)
		if st != 0 {
			t.Fatalf("%s: status %d %q", c.name, st, errs)
		}
		if err := f.m.SetKVCache(c.kv); err != nil {
			t.Fatal(err)
		}
		if want := expectedSample(t, f.m, prompt, 40, c.o, c.seed); out != want {
			t.Errorf("%s: sample\n%q\nwant\n%q", c.name, out, want)
		}
		if err := f.m.SetKVCache(attention.KVFloat32); err != nil {
			t.Fatal(err)
		}
	}
	// Top-p changes what is drawn (the check above could pass with top-p
	// ignored only if the nucleus were everything).
	if expectedSample(t, f.m, prompt, 40, gpt.SampleOptions{Temperature: 1, TopP: 0.6}, 5) == expectedSample(t, f.m, prompt, 40, gpt.SampleOptions{Temperature: 1}, 5) {
		t.Error("top-p 0.6 draws what top-p 1 draws")
	}
	st, out, errs := runCmd("sample", "--checkpoint", f.llmcOnly, "-n", "30", "--seed", "2")
	if want := expectedSample(t, f.m, "", 30, gpt.SampleOptions{Temperature: 1}, 2); st != 0 || out != want {
		t.Errorf("llm.c tokenizer alone: status %d %q, output\n%q\nwant\n%q", st, errs, out, want)
	}
}

// recorder keeps every Write as one chunk.
type recorder struct{ chunks []string }

func (r *recorder) Write(b []byte) (int, error) {
	r.chunks = append(r.chunks, string(b))
	return len(b), nil
}

// TestUTF8Stream: a character split across tokens is written once all of
// its bytes have come; bytes that can never complete one are written as
// they come; flush writes a dangling start.
func TestUTF8Stream(t *testing.T) {
	for _, c := range []struct {
		name   string
		tokens []string
		want   []string // the writes, the flush's last
	}{
		{"ascii", []string{"ab", "c"}, []string{"ab", "c"}},
		{"3-byte split 1+2", []string{"x\xe4", "\xb8\xad!"}, []string{"x", "中!"}},
		{"3-byte split 1+1+1", []string{"\xe4", "\xb8", "\xad"}, []string{"中"}},
		{"4-byte split", []string{"a\xf0\x9f", "\x98", "\x80b"}, []string{"a", "😀b"}},
		{"invalid lead then ascii", []string{"\xe4", "z"}, []string{"\xe4z"}},
		{"stray continuation", []string{"\xad", "q"}, []string{"\xad", "q"}},
		{"dangling at the end", []string{"ok\xe4\xb8"}, []string{"ok", "\xe4\xb8"}},
	} {
		var r recorder
		s := &utf8Stream{w: &r}
		for _, tok := range c.tokens {
			if err := s.write([]byte(tok)); err != nil {
				t.Fatal(err)
			}
		}
		s.flush()
		if strings.Join(r.chunks, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: writes %q, want %q", c.name, r.chunks, c.want)
		}
	}
}

// evalLine parses the loss and token count of eval's line.
func evalLine(t *testing.T, out string) (string, int) {
	t.Helper()
	var loss string
	var ppl float64
	var n int
	i := strings.Index(out, ": cross-entropy ")
	if i < 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("eval output %q", out)
	}
	if _, err := fmt.Sscanf(out[i:], ": cross-entropy %s nats per token, perplexity %g, over %d tokens", &loss, &ppl, &n); err != nil {
		t.Fatalf("eval output %q: %v", out, err)
	}
	var l float64
	fmt.Sscan(loss, &l)
	if math.Abs(math.Exp(l)-ppl) > 1e-3*ppl {
		t.Errorf("perplexity %g is not exp(%g)", ppl, l)
	}
	return loss, n
}

// directLoss is the mean of Forward over the sequential batches of toks,
// built here by hand.
func directLoss(m *gpt.Model, toks []uint16, b, tlen, batches int) string {
	var sum float64
	for k := range batches {
		var x, y []int32
		for i := range b {
			s := (k*b + i) * tlen
			for j := range tlen {
				x, y = append(x, int32(toks[s+j])), append(y, int32(toks[s+j+1]))
			}
		}
		sum += m.Forward(x, y, b, tlen)
	}
	return fmt.Sprintf("%.6f", sum/float64(batches))
}

// TestEval: eval's loss over text (BPE for GPT-2 in both formats, the
// characters for our checkpoint) and over a token file equals Forward's
// over the same batches.
func TestEval(t *testing.T) {
	f := newGPT2Fixture(t)
	bpeIDs := testTokenizer(t).EncodeWithSpecial(string(must(os.ReadFile(f.text))))
	bpeToks := make([]uint16, len(bpeIDs))
	for i, id := range bpeIDs {
		bpeToks[i] = uint16(id)
	}
	tokFile := filepath.Join(f.dir, "toks.bin")
	if err := data.WriteTokens(tokFile, bpeToks, true); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(f.dir, "ours")
	if st, _, errs := runCmd(tiny(ck, "--max_iters", "5", "--data", f.text)...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	ours, err := gpt.Load(filepath.Join(ck, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	charToks, err := ours.Vocab.Encode(string(must(os.ReadFile(f.text))))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		args     []string
		m        *gpt.Model
		toks     []uint16
		b, tl, n int
	}{
		{"hf text", []string{"--checkpoint", f.hfDir, "--data", f.text, "--batch_size", "3", "--block_size", "16", "--batches", "4"}, f.m, bpeToks, 3, 16, 4},
		{"llmc text, model's block", []string{"--checkpoint", f.llmcBin, "--data", f.text, "--batch_size", "2", "--batches", "3"}, f.m, bpeToks, 2, 32, 3},
		{"token file, every batch", []string{"--checkpoint", f.llmcOnly, "--data", tokFile, "--batch_size", "4", "--block_size", "32"}, f.m, bpeToks, 4, 32, gpt.SequentialBatches(len(bpeToks), 4, 32)},
		{"token file, no tokenizer", []string{"--checkpoint", f.noTok, "--data", tokFile, "--batch_size", "2", "--block_size", "16", "--batches", "6"}, f.m, bpeToks, 2, 16, 6},
		{"our checkpoint", []string{"--checkpoint", ck, "--data", f.text, "--batch_size", "2", "--block_size", "16", "--batches", "5"}, ours.Model, charToks, 2, 16, 5},
	} {
		st, out, errs := runCmd(append([]string{"eval"}, c.args...)...)
		if st != 0 {
			t.Fatalf("%s: status %d %q", c.name, st, errs)
		}
		loss, n := evalLine(t, out)
		if want := directLoss(c.m, c.toks, c.b, c.tl, c.n); loss != want || n != c.b*c.tl*c.n {
			t.Errorf("%s: loss %s over %d tokens, want %s over %d\n%s", c.name, loss, n, want, c.b*c.tl*c.n, out)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSampleBPEStreams: the tokens of a BPE model's sample are written
// as they come, each write holding whole characters, and together they
// are the decoded tokens.
func TestSampleBPEStreams(t *testing.T) {
	f := newGPT2Fixture(t)
	var out recorder
	var errb bytes.Buffer
	if st := run([]string{"sample", "--checkpoint", f.hfDir, "--prompt", "中", "-n", "50", "--seed", "9"}, &out, &errb); st != 0 {
		t.Fatalf("status %d %q", st, errb.String())
	}
	all := strings.Join(out.chunks, "")
	if want := expectedSample(t, f.m, "中", 50, gpt.SampleOptions{Temperature: 1}, 9); all != want {
		t.Fatalf("output %q, want %q", all, want)
	}
	for i, c := range out.chunks {
		// No write ends in the first bytes of a character that later
		// bytes complete.
		for k := 1; k < utf8.UTFMax && k <= len(c); k++ {
			if tail := c[len(c)-k:]; utf8.RuneStart(tail[0]) {
				if !utf8.FullRuneInString(tail) {
					t.Errorf("write %d, %q, ends in an incomplete character", i, c)
				}
				break
			}
		}
	}
	if len(out.chunks) < 10 {
		t.Errorf("%d writes of %q", len(out.chunks), all)
	}
}
