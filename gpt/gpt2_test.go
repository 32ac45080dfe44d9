package gpt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// testGPT2 is the shape of the small GPT-2 the loader tests write.
var testGPT2 = gpt2Spec{L: 2, H: 2, C: 16, V: 50, T: 12}

// testConfigJSON is a Hugging Face config.json of testGPT2.
const testConfigJSON = `{"model_type": "gpt2", "n_head": 2, "n_embd": 16, "n_layer": 2, "n_positions": 12, "vocab_size": 50, "layer_norm_epsilon": 1e-05, "activation_function": "gelu_new"}`

// gpt2File is one checkpoint of a test GPT-2 in a file format.
type gpt2File struct {
	name   string
	params *gpt2Params // the weights, rounded to the format's precision
	file   string      // the checkpoint's file name
	data   []byte
	config []byte // config.json beside it, or nil
}

// gpt2Files returns the test GPT-2 in every format LoadGPT2 reads.
func gpt2Files() []gpt2File {
	p32, p16, pbf := randomGPT2(testGPT2, 1, roundF32), randomGPT2(testGPT2, 1, roundF16), randomGPT2(testGPT2, 1, roundBF16)
	cfg := []byte(`{"n_head": 2}`)
	return []gpt2File{
		{"safetensors F32", p32, HFFile, writeHF(p32, "F32", hfOptions{}), cfg},
		{"safetensors F32 transformer. prefix, mask buffers, lm_head, full config.json", p32, HFFile,
			writeHF(p32, "F32", hfOptions{prefix: "transformer.", buffers: true, lmHead: p32.t["wte.weight"]}), []byte(testConfigJSON)},
		{"safetensors F16", p16, HFFile, writeHF(p16, "F16", hfOptions{buffers: true}), cfg},
		{"safetensors BF16", pbf, HFFile, writeHF(pbf, "BF16", hfOptions{}), cfg},
		{"llm.c version 3 (float32)", p32, "gpt2_124M.bin", writeLLMC(p32, 3, 64), nil},
		{"llm.c version 5 (bfloat16)", pbf, "gpt2_124M_bf16.bin", writeLLMC(pbf, 5, 64), nil},
	}
}

// maxAbs is the largest magnitude in rows.
func maxAbs(rows [][]float64) float64 {
	var m float64
	for _, r := range rows {
		for _, v := range r {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}

// TestLoadGPT2MatchesReference loads the test GPT-2 from every format, on
// every kernel implementation, and checks its config and its logits over
// two sequences against the float64 reference computed from the weights
// the file was written from: within 1e-4 of the largest logit's magnitude
// (float32 arithmetic and the tanh table of GELU are about 1e-6 off).
func TestLoadGPT2MatchesReference(t *testing.T) {
	files := gpt2Files()
	dir := t.TempDir()
	paths := make([]string, len(files))
	for i, f := range files {
		var err error
		if paths[i], err = writeFiles(dir, f.file, map[string][]byte{f.file: f.data, HFConfigFile: f.config}); err != nil {
			t.Fatal(err)
		}
	}
	s := testGPT2
	want := Config{Vocab: s.V, BlockSize: s.T, Layers: s.L, Heads: s.H, Width: s.C, TieEmbeddings: true}
	r := rng.New(5)
	tok := randTokens(r, 2*s.T, s.V)
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		for i, f := range files {
			m, err := LoadGPT2(paths[i], WithImpl(k))
			if err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			if m.Config != want || m.Impl() != k {
				t.Fatalf("%s: config %+v on %v, want %+v on %v", f.name, m.Config, m.Impl(), want, k)
			}
			m.Forward(tok, nil, 2, s.T)
			got := m.Logits()
			for b := 0; b < 2; b++ {
				ref := f.params.refLogits(tok[b*s.T : (b+1)*s.T])
				tol := 1e-4 * maxAbs(ref)
				for i, row := range ref {
					for v, w := range row {
						if g := float64(got[(b*s.T+i)*s.V+v]); math.Abs(g-w) > tol {
							t.Fatalf("%s: sequence %d position %d: logit %d = %g, float64 reference %g (tolerance %.2g)", f.name, b, i, v, g, w, tol)
						}
					}
				}
			}
		}
	})
}

// TestLoadGPT2Directory checks that a directory is read as its
// model.safetensors and config.json.
func TestLoadGPT2Directory(t *testing.T) {
	f := gpt2Files()[0]
	path, err := writeFiles(t.TempDir(), f.file, map[string][]byte{f.file: f.data, HFConfigFile: f.config})
	if err != nil {
		t.Fatal(err)
	}
	a, err := LoadGPT2(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadGPT2(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Config != b.Config || !equalF32(a.Params, b.Params) {
		t.Fatal("the directory and its model.safetensors load differently")
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGPT2GreedyMatchesReference generates greedily from the loaded test
// GPT-2 with a Sampler (key/value caches, the tied head) and checks every
// token against the argmax of the float64 reference's logits over the
// tokens so far (a token whose reference logit is within the tolerance of
// the maximum is accepted: a near tie).
func TestGPT2GreedyMatchesReference(t *testing.T) {
	for _, f := range gpt2Files() {
		if f.name != "safetensors F32" && !strings.HasPrefix(f.name, "llm.c") {
			continue
		}
		path, err := writeFiles(t.TempDir(), f.file, map[string][]byte{f.file: f.data, HFConfigFile: f.config})
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadGPT2(path)
		if err != nil {
			t.Fatal(err)
		}
		hist := []int32{3, 14, 15}
		n := testGPT2.T - len(hist)
		ties := 0
		err = m.NewSampler().Generate(hist, n, 0, 0, nil, func(tok int32) error {
			ref := f.params.refLogits(hist)
			last := ref[len(ref)-1]
			best := 0
			for v := range last {
				if last[v] > last[best] {
					best = v
				}
			}
			tol := 1e-4 * maxAbs(ref)
			if last[tok] < last[best]-tol {
				return fmt.Errorf("after %v: greedy token %d (reference logit %g), the reference's argmax %d (%g)", hist, tok, last[tok], best, last[best])
			}
			if int(tok) != best {
				ties++
			}
			hist = append(hist, tok)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if len(hist) != testGPT2.T || ties > 1 {
			t.Fatalf("%s: generated %v with %d near ties", f.name, hist, ties)
		}
	}
}

// TestLoadGPT2Errors checks that malformed or foreign files are refused
// with an error naming the file and what is wrong, and no model.
func TestLoadGPT2Errors(t *testing.T) {
	s := testGPT2
	p := randomGPT2(s, 1, roundF32)
	hf := func(o hfOptions) []byte { return writeHF(p, "F32", o) }
	good := hf(hfOptions{})
	cfg := []byte(`{"n_head": 2}`)
	llmc := writeLLMC(p, 3, 64)
	withHeader := func(i int, v int32) []byte {
		b := bytes.Clone(llmc)
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		return b
	}
	nan := p.clone()
	nan.t["h.1.ln_2.bias"][3] = math.NaN()
	otherHead := slices.Clone(p.t["wte.weight"])
	otherHead[17] += 0.5
	tiny, d, tc := smallRun(t, 1, false)
	tr, _ := NewTrainer(tiny, d, tc)
	tinyPath := filepath.Join(t.TempDir(), CheckpointFile)
	if err := tr.Save(tinyPath, d.Vocab); err != nil {
		t.Fatal(err)
	}
	tinyBytes, err := os.ReadFile(tinyPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		config []byte
		want   string
	}{
		{"empty", []byte{}, nil, "too short"},
		{"text", []byte("hello, this is not a model"), nil, "neither a safetensors file"},
		{"TinyGPT checkpoint", tinyBytes, nil, "gpt.Load"},
		{"truncated safetensors", good[:len(good)-10], cfg, "outside the"},
		{"header length past the end", append(binary.LittleEndian.AppendUint64(nil, 1<<40), good[8:]...), cfg, "safetensors header of"},
		{"header not JSON", append(binary.LittleEndian.AppendUint64(nil, 3), []byte("{x}abc")...), cfg, "not a JSON object"},
		{"missing tensor", hf(hfOptions{omit: "h.1.mlp.c_fc.bias"}), cfg, "h.1.mlp.c_fc.bias (our h.1.mlp.b_fc) is missing"},
		{"missing block", hf(hfOptions{extra: map[string][]int{"h.40.ln_1.weight": {16}}}), cfg, "blocks are missing"},
		{"foreign tensor", hf(hfOptions{extra: map[string][]int{"h.0.attn.k_proj.weight": {16, 16}}}), cfg, "not part of GPT-2's layout"},
		{"duplicate", hf(hfOptions{extra: map[string][]int{"transformer.ln_f.bias": {16}}}), cfg, "are the same"},
		{"wrong shape", hf(hfOptions{hook: func(h map[string]any) {
			h["h.0.attn.c_attn.weight"].(map[string]any)["shape"] = []int{48, 16}
		}}), cfg, `"h.0.attn.c_attn.weight" has shape [48 16]`},
		{"bytes do not match the shape", hf(hfOptions{hook: func(h map[string]any) {
			h["ln_f.bias"].(map[string]any)["shape"] = []int{15}
		}}), cfg, "needs 60 bytes"},
		{"overlap", hf(hfOptions{hook: func(h map[string]any) {
			h["ln_f.bias"].(map[string]any)["data_offsets"] = h["ln_f.weight"].(map[string]any)["data_offsets"]
		}}), cfg, "overlap"},
		{"dtype", hf(hfOptions{hook: func(h map[string]any) {
			h["ln_f.bias"].(map[string]any)["dtype"] = "I32"
		}}), cfg, "dtype I32"},
		{"NaN weight", writeHF(nan, "F32", hfOptions{}), cfg, "tensor h.1.ln_2.bias: element 3 is NaN"},
		{"untied lm_head", hf(hfOptions{lmHead: otherHead}), cfg, "differs from wte.weight at [1, 1]"},
		{"no heads", good, nil, "no config.json with n_head"},
		{"n_head", good, []byte(`{"n_head": 3}`), "n_head 3, which does not divide the width 16"},
		{"n_layer", good, []byte(`{"n_head": 2, "n_layer": 3}`), "n_layer 3, the weights have 2"},
		{"epsilon", good, []byte(`{"n_head": 2, "layer_norm_epsilon": 1e-6}`), "layer_norm_epsilon 1e-06"},
		{"activation", good, []byte(`{"n_head": 2, "activation_function": "relu"}`), `activation_function "relu"`},
		{"model type", good, []byte(`{"n_head": 2, "model_type": "llama"}`), `model_type "llama"`},
		{"config not JSON", good, []byte(`{n_head: 2}`), "config.json: invalid character"},
		{"llm.c truncated", llmc[:len(llmc)-4], nil, "needs"},
		{"llm.c header only", llmc[:1024], nil, "needs"},
		{"llm.c short header", llmc[:100], nil, "shorter than its 1024-byte header"},
		{"llm.c version", withHeader(1, 1), nil, "version 1"},
		{"llm.c Vp below V", withHeader(7, 49), nil, "padded vocabulary Vp 49"},
		{"llm.c heads", withHeader(5, 3), nil, "NH 3 does not divide C 16"},
		{"llm.c huge width", withHeader(6, 1<<30), nil, "C 1073741824 outside"},
		{"llm.c negative layers", withHeader(4, -2), nil, "L -2 outside"},
		{"llm.c token file", withHeader(0, 20240520), nil, "token file"},
		{"config.json of a huge model", good, []byte(`{"n_head": 16, "n_embd": 16384, "n_layer": 1024}`), "n_embd 16384, the weights have 16"},
		{"config.json of a huge model, weights agreeing", good, []byte(`{"n_head": 2, "n_embd": 16, "n_layer": 1024}`), "n_layer 1024, the weights have 2"},
		{"llm.c block above the limit", writeLLMC(randomGPT2(gpt2Spec{L: 1, H: 1, C: 2, V: 3, T: MaxBlockSize + 1}, 1, roundF32), 5, 3), nil, "Config.BlockSize = 32769 is above the limit of 32768"},
		// The model (parameters and gradients in float32) is four times a
		// BF16 file: the memory is checked against the model, not the file.
		{"memory of BF16", writeHF(p, "BF16", hfOptions{}), cfg, "needs about"},
		{"memory of llm.c BF16", writeLLMC(p, 5, 64), nil, "needs about"},
	} {
		path, err := writeFiles(t.TempDir(), "model.bin", map[string][]byte{"model.bin": c.data, HFConfigFile: c.config})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c.name, "memory") {
			// Below the model's bytes, above four times the file's.
			st, _ := os.Stat(path)
			mem := ModelBytes(Config{Vocab: s.V, BlockSize: s.T, Layers: s.L, Heads: s.H, Width: s.C, TieEmbeddings: true}, false) - 1
			if mem < 3*st.Size() {
				t.Fatalf("%s: file of %d bytes, model of %d", c.name, st.Size(), mem+1)
			}
			t.Setenv(MemoryEnv, strconv.FormatInt(mem, 10))
		}
		m, err := LoadGPT2(path)
		os.Unsetenv(MemoryEnv)
		if err == nil || m != nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: LoadGPT2 = %v, %v; want nil and an error naming the file and containing %q", c.name, m, err, c.want)
		}
	}
	if _, err := LoadGPT2(filepath.Join(t.TempDir(), "absent.bin")); err == nil {
		t.Error("a missing file loaded")
	}
}

// TestGPT2Heads pins GPT-2's family table.
func TestGPT2Heads(t *testing.T) {
	for _, c := range []struct{ width, heads int }{{768, 12}, {1024, 16}, {1280, 20}, {1600, 25}, {16, 0}, {512, 0}} {
		if got := gpt2Heads(c.width); got != c.heads {
			t.Errorf("gpt2Heads(%d) = %d, want %d", c.width, got, c.heads)
		}
	}
}

// TestHalfDecoding checks the loader's float16 and bfloat16 conversions on
// named values and on every bit pattern against the tests' own decoders.
func TestHalfDecoding(t *testing.T) {
	for _, c := range []struct {
		bits uint16
		want float64
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0400, math.Ldexp(1, -14)},
		{0x0001, math.Ldexp(1, -24)}, {0x03ff, math.Ldexp(1023, -24)}, {0x3555, 0.333251953125},
		{0x7c00, math.Inf(1)}, {0xfc00, math.Inf(-1)},
	} {
		if got := f16ToF32(c.bits); float64(got) != c.want {
			t.Errorf("f16ToF32(%#04x) = %g, want %g", c.bits, got, c.want)
		}
	}
	if got := f16ToF32(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("f16ToF32(0x8000) = %g, want -0", got)
	}
	if got := f16ToF32(0x7e00); !math.IsNaN(float64(got)) {
		t.Errorf("f16ToF32(0x7e00) = %g, want NaN", got)
	}
	var b [2]byte
	dst := make([]float32, 1)
	for bits := 0; bits < 1<<16; bits++ {
		binary.LittleEndian.PutUint16(b[:], uint16(bits))
		for _, c := range []struct {
			name   string
			decode func([]float32, []byte)
			want   float64
		}{{"F16", decodeF16, halfValue(uint16(bits))}, {"BF16", decodeBF16, bf16Value(uint16(bits))}} {
			c.decode(dst, b[:])
			got := float64(dst[0])
			if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) || math.Signbit(got) != (bits>>15 == 1) {
				t.Fatalf("%s %#04x: decoded %g, want %g", c.name, bits, got, c.want)
			}
		}
	}
	// The tests' own rounding: a representable value rounds to itself.
	for _, x := range []float64{0.1, -3.75, 1e-6, 65504} {
		if r := roundF16(x); roundF16(r) != r || math.Abs(r-x) > math.Abs(x)*1e-3+math.Ldexp(1, -25) {
			t.Errorf("roundF16(%g) = %g", x, r)
		}
		if r := roundBF16(x); roundBF16(r) != r || math.Abs(r-x) > math.Abs(x)*8e-3 {
			t.Errorf("roundBF16(%g) = %g", x, r)
		}
	}
}

// fuzzLoad loads file (with config as config.json) from memory and checks
// that it either fails or yields a usable model no larger than the file
// allows: never a panic.
func fuzzLoad(t *testing.T, file, config []byte) {
	m, err := loadGPT2(bytes.NewReader(file), int64(len(file)), config)
	if err != nil {
		if m != nil {
			t.Fatal("a model and an error")
		}
		return
	}
	if err := m.Config.Validate(); err != nil || !m.Config.TieEmbeddings {
		t.Fatalf("loaded config %+v: %v", m.Config, err)
	}
	if 2*len(m.Params) > len(file) {
		t.Fatalf("%d parameters from a file of %d bytes", len(m.Params), len(file))
	}
	m.Forward([]int32{0}, nil, 1, 1)
	if len(m.Logits()) != m.Config.Vocab {
		t.Fatalf("%d logits for a vocabulary of %d", len(m.Logits()), m.Config.Vocab)
	}
}

// FuzzLoadGPT2Safetensors feeds LoadGPT2's reader mutated Hugging Face
// files (seeded with the tests' writers) and config.json files.
func FuzzLoadGPT2Safetensors(f *testing.F) {
	for _, g := range gpt2Files() {
		if g.config != nil {
			f.Add(g.data, g.config)
		}
	}
	small := randomGPT2(gpt2Spec{L: 1, H: 1, C: 4, V: 3, T: 2}, 2, roundF16)
	f.Add(writeHF(small, "F16", hfOptions{}), []byte(`{"n_head": 1}`))
	f.Fuzz(fuzzLoad)
}

// FuzzLoadGPT2LLMC feeds LoadGPT2's reader mutated llm.c files (seeded
// with the tests' writer).
func FuzzLoadGPT2LLMC(f *testing.F) {
	for _, g := range gpt2Files() {
		if g.config == nil {
			f.Add(g.data)
		}
	}
	small := randomGPT2(gpt2Spec{L: 1, H: 1, C: 4, V: 3, T: 2}, 2, roundBF16)
	f.Add(writeLLMC(small, 5, 4))
	f.Fuzz(func(t *testing.T, file []byte) { fuzzLoad(t, file, nil) })
}

// TestReadF32At: a tensor of several of readF32At's pieces reads whole
// and exactly; a value that is not finite is refused with its index in
// the tensor, in the first piece, a later one or the last element; a file
// that ends inside the tensor is an unexpected EOF.
func TestReadF32At(t *testing.T) {
	const piece = safetensors.ChunkSize / 4
	n := 2*piece + 3
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i%1000) - 0.25
	}
	const off = 8
	file := func(edit func(v []float32)) []byte {
		v := slices.Clone(vals)
		if edit != nil {
			edit(v)
		}
		return append(make([]byte, off), f32Bytes(v)...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"intact", file(nil), ""},
		{"NaN in the first piece", file(func(v []float32) { v[7] = float32(math.NaN()) }), "tensor x: element 7 is NaN"},
		{"+Inf in the second piece", file(func(v []float32) { v[piece+5] = float32(math.Inf(1)) }), fmt.Sprintf("tensor x: element %d is +Inf", piece+5)},
		{"-Inf last", file(func(v []float32) { v[n-1] = float32(math.Inf(-1)) }), fmt.Sprintf("tensor x: element %d is -Inf", n-1)},
		{"truncated in the second piece", file(nil)[:off+4*(piece+9)], "unexpected EOF"},
	} {
		dst := make([]float32, n)
		err := readF32At(bytes.NewReader(c.b), off, "x", dst)
		if c.want == "" {
			if err != nil || !slices.Equal(dst, vals) {
				t.Errorf("%s: %v (values equal: %v)", c.name, err, slices.Equal(dst, vals))
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestFirstNonFinite checks firstNonFinite's answer, the index of the
// first infinity or NaN or -1, where the sum it tries first is finite,
// is not finite though every element is (overflow), or is not finite
// because of the elements.
func TestFirstNonFinite(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	const n = 3 * (1 << 12) // three of the scan's chunks
	cases := []struct {
		name string
		set  map[int]float32
		big  bool // every element 3e38: the sum overflows
		want int
	}{
		{"all finite", nil, false, -1},
		{"overflowing sum, all finite", nil, true, -1},
		{"NaN first", map[int]float32{0: nan}, false, 0},
		{"+Inf mid chunk", map[int]float32{100: inf}, false, 100},
		{"-Inf in the last chunk", map[int]float32{n - 1: -inf}, false, n - 1},
		{"+Inf and -Inf (sum NaN)", map[int]float32{5000: inf, 9000: -inf}, false, 5000},
		{"NaN among huge values", map[int]float32{7000: nan}, true, 7000},
	}
	for _, c := range cases {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%7) - 3
			if c.big {
				v[i] = 3e38
			}
		}
		for i, x := range c.set {
			v[i] = x
		}
		if got := firstNonFinite(v); got != c.want {
			t.Errorf("%s: firstNonFinite = %d, want %d", c.name, got, c.want)
		}
	}
	if got := firstNonFinite(nil); got != -1 {
		t.Errorf("empty: firstNonFinite = %d, want -1", got)
	}
}
