package main

import (
	encbin "encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/bpe"
)

// Small random GPT-2-shaped models written as Hugging Face's
// model.safetensors (with config.json) and as llm.c's gpt2_*.bin, and a
// hand-made GPT-2 BPE vocabulary, for the tests of sample, eval and
// train --init on GPT-2 checkpoints (the writers follow those of
// gpt/reference_test.go, from a gpt.Model's parameters).

// testMerges make the hand-made vocabulary: ids 0..255 are the single
// bytes (GPT-2's order does not matter here), then one id per merge, then
// the end-of-text token.
var testMerges = [][2]string{
	{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "hello"},
	{" ", "w"}, {"o", "r"}, {" w", "or"}, {"l", "d"}, {" wor", "ld"},
	{"t", "h"}, {" ", "th"}, {" th", "e"},
	{"\xe4", "\xb8"}, {"\xe4\xb8", "\xad"}, // 中
}

// toAlphabet writes bytes in GPT-2's byte alphabet.
func toAlphabet(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteRune(bpe.ByteRune(c))
	}
	return s.String()
}

// bpeFiles returns encoder.json and vocab.bpe of the hand-made vocabulary
// and its size.
func bpeFiles() (encoderJSON, vocabBPE []byte, size int) {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[toAlphabet([]byte{byte(b)})] = b
	}
	var v strings.Builder
	v.WriteString("#version: 0.2\n")
	for _, m := range testMerges {
		l, r := toAlphabet([]byte(m[0])), toAlphabet([]byte(m[1]))
		if _, ok := vocab[l+r]; !ok {
			vocab[l+r] = len(vocab)
		}
		v.WriteString(l + " " + r + "\n")
	}
	vocab[bpe.EndOfText] = len(vocab)
	j, err := json.Marshal(vocab)
	if err != nil {
		panic(err)
	}
	return j, []byte(v.String()), len(vocab)
}

// testVocab is the size of the hand-made vocabulary.
var _, _, testVocab = bpeFiles()

// testTokenizer loads the hand-made vocabulary.
func testTokenizer(t *testing.T) *bpe.Tokenizer {
	t.Helper()
	ej, vb, _ := bpeFiles()
	tok, err := bpe.Load(strings.NewReader(string(ej)), strings.NewReader(string(vb)))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// writeBPE writes the hand-made vocabulary into dir under OpenAI's names
// (encoder.json, vocab.bpe) or Hugging Face's (vocab.json, merges.txt).
func writeBPE(t *testing.T, dir string, hf bool) {
	t.Helper()
	ej, vb, _ := bpeFiles()
	names := [2]string{"encoder.json", "vocab.bpe"}
	if hf {
		names = [2]string{"vocab.json", "merges.txt"}
	}
	mustWrite(t, filepath.Join(dir, names[0]), ej)
	mustWrite(t, filepath.Join(dir, names[1]), vb)
}

// writeLlmcTokenizer writes the hand-made vocabulary as llm.c's
// gpt2_tokenizer.bin (version 2).
func writeLlmcTokenizer(t *testing.T, dir string) {
	t.Helper()
	tok := testTokenizer(t)
	hdr := make([]uint32, 256)
	hdr[0], hdr[1], hdr[2], hdr[3] = 20240328, 2, uint32(tok.VocabSize()), uint32(tok.EOT())
	var b []byte
	for _, w := range hdr {
		b = encbin.LittleEndian.AppendUint32(b, w)
	}
	for id := range tok.VocabSize() {
		s, _ := tok.Token(id)
		b = append(append(b, byte(len(s))), s...)
	}
	mustWrite(t, filepath.Join(dir, llmcTokenizer), b)
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testGPT2 returns a random GPT-2-shaped model (tied embeddings) over the
// hand-made vocabulary: 2 layers, 2 heads, width 16, block 32. Its token
// embedding is scaled up so that its samples are not uniform.
func testGPT2(t *testing.T, seed uint64) *gpt.Model {
	t.Helper()
	m, err := gpt.New(gpt.Config{Vocab: testVocab, BlockSize: 32, Layers: 2, Heads: 2, Width: 16, TieEmbeddings: true}, seed)
	if err != nil {
		t.Fatal(err)
	}
	wte := m.Config.Tensors()[0]
	for i := range wte.Size() {
		m.Params[wte.Offset+i] *= 50
	}
	return m
}

// param returns the tensor of m named name (ours, as in Config.Tensors).
func param(m *gpt.Model, name string) []float32 {
	for _, x := range m.Config.Tensors() {
		if x.Name == name {
			return m.Params[x.Offset : x.Offset+x.Size()]
		}
	}
	panic("no tensor " + name)
}

// hfNames maps a block's tensor names (after "h.N.") from ours to GPT-2's.
var hfNames = map[string]string{
	"ln1.w": "ln_1.weight", "ln1.b": "ln_1.bias", "attn.w_qkv": "attn.c_attn.weight", "attn.b_qkv": "attn.c_attn.bias",
	"attn.w_proj": "attn.c_proj.weight", "attn.b_proj": "attn.c_proj.bias", "ln2.w": "ln_2.weight", "ln2.b": "ln_2.bias",
	"mlp.w_fc": "mlp.c_fc.weight", "mlp.b_fc": "mlp.c_fc.bias", "mlp.w_out": "mlp.c_proj.weight", "mlp.b_out": "mlp.c_proj.bias",
}

// writeHF writes m as dir/model.safetensors (F32, "transformer." prefix,
// tensors in name order) with dir/config.json.
func writeHF(t *testing.T, dir string, m *gpt.Model) string {
	t.Helper()
	cfg := m.Config
	type entry struct {
		name  string
		shape []int
		v     []float32
	}
	var es []entry
	for _, x := range cfg.Tensors() {
		name := map[string]string{"wte": "wte.weight", "wpe": "wpe.weight", "ln_f.w": "ln_f.weight", "ln_f.b": "ln_f.bias"}[x.Name]
		if name == "" {
			rest := strings.TrimPrefix(x.Name, "h.")
			num, sub, _ := strings.Cut(rest, ".")
			name = "h." + num + "." + hfNames[sub]
		}
		es = append(es, entry{"transformer." + name, x.Shape, m.Params[x.Offset : x.Offset+x.Size()]})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var body []byte
	for _, e := range es {
		start := len(body)
		for _, v := range e.v {
			body = encbin.LittleEndian.AppendUint32(body, math.Float32bits(v))
		}
		header[e.name] = map[string]any{"dtype": "F32", "shape": e.shape, "data_offsets": []int{start, len(body)}}
	}
	hj, _ := json.Marshal(header)
	b := encbin.LittleEndian.AppendUint64(nil, uint64(len(hj)))
	p := filepath.Join(dir, gpt.HFFile)
	mustWrite(t, p, append(append(b, hj...), body...))
	cj, _ := json.Marshal(map[string]any{"model_type": "gpt2", "n_head": cfg.Heads, "n_embd": cfg.Width, "n_layer": cfg.Layers,
		"n_positions": cfg.BlockSize, "vocab_size": cfg.Vocab, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"})
	mustWrite(t, filepath.Join(dir, gpt.HFConfigFile), cj)
	return p
}

// writeLLMC writes m as llm.c's gpt2_*.bin of version 3 (float32) at
// path, its vocabulary padded to a multiple of 64 rows.
func writeLLMC(t *testing.T, path string, m *gpt.Model) {
	t.Helper()
	cfg := m.Config
	C, V := cfg.Width, cfg.Vocab
	vp := (V + 63) / 64 * 64
	var b []byte
	hdr := make([]int32, 256)
	copy(hdr, []int32{20240326, 3, int32(cfg.BlockSize), int32(V), int32(cfg.Layers), int32(cfg.Heads), int32(C), int32(vp)})
	for _, h := range hdr {
		b = encbin.LittleEndian.AppendUint32(b, uint32(h))
	}
	put := func(v []float32) {
		for _, x := range v {
			b = encbin.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	put(param(m, "wte"))
	put(make([]float32, (vp-V)*C))
	put(param(m, "wpe"))
	for _, kind := range []struct {
		name    string
		in, out int // a matrix stored out×in by llm.c, or 0
	}{
		{"ln1.w", 0, 0}, {"ln1.b", 0, 0}, {"attn.w_qkv", C, 3 * C}, {"attn.b_qkv", 0, 0},
		{"attn.w_proj", C, C}, {"attn.b_proj", 0, 0}, {"ln2.w", 0, 0}, {"ln2.b", 0, 0},
		{"mlp.w_fc", C, 4 * C}, {"mlp.b_fc", 0, 0}, {"mlp.w_out", 4 * C, C}, {"mlp.b_out", 0, 0},
	} {
		for l := range cfg.Layers {
			v := param(m, "h."+strconv.Itoa(l)+"."+kind.name)
			if kind.in > 0 {
				tr := make([]float32, len(v))
				for i := range kind.in {
					for o := range kind.out {
						tr[o*kind.in+i] = v[i*kind.out+o]
					}
				}
				v = tr
			}
			put(v)
		}
	}
	put(param(m, "ln_f.w"))
	put(param(m, "ln_f.b"))
	mustWrite(t, path, b)
}
