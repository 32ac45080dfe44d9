package gpt

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

// weightsModel returns a random model of cfg in format f.
func weightsModel(t testing.TB, cfg Config, f Weights) *Model {
	t.Helper()
	m, err := New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = m.WithWeights(f); err != nil {
		t.Fatal(err)
	}
	return m
}

// weightsConfigs are the shapes the converted checkpoints are tested on:
// tied and untied heads, a width that is a multiple of the groups and one
// that is not (padded rows).
var weightsConfigs = []Config{
	{Vocab: 11, BlockSize: 8, Layers: 2, Heads: 2, Width: 32, TieEmbeddings: true},
	{Vocab: 11, BlockSize: 8, Layers: 1, Heads: 2, Width: 40},
	{Vocab: 13, BlockSize: 8, Layers: 1, Heads: 1, Width: 20, TieEmbeddings: true},
}

// greedy returns the tokens m decodes greedily from prompt, n of them.
func greedy(t *testing.T, m *Model, prompt []int32, n int) []int32 {
	t.Helper()
	var out []int32
	err := m.NewSampler().GenerateWith(prompt, n, SampleOptions{}, nil, func(id int32) error {
		out = append(out, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSaveWeightsRoundTrip saves models of every format and shape with
// SaveWeights and loads them back: the same format, the same matrices
// and float32 tensors bit for bit (float32: the same parameters), the
// same greedy tokens, the step, vocabulary and extra metadata kept, and
// no optimizer state.
func TestSaveWeightsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, cfg := range weightsConfigs {
		for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
			m := weightsModel(t, cfg, f)
			path := filepath.Join(dir, f.String()+cfg.describe()+".safetensors")
			vocab, err := data.ParseVocab("abcdefghijklm"[:cfg.Vocab])
			if err != nil {
				t.Fatal(err)
			}
			if err := m.SaveWeights(path, vocab, 42, map[string]string{"tinygpt.x": "y"}); err != nil {
				t.Fatal(err)
			}
			ck, err := Load(path)
			if err != nil {
				t.Fatalf("%v %s: %v", f, cfg.describe(), err)
			}
			got := ck.Model
			if got.Weights() != f || ck.Step != 42 || ck.Opt != nil || ck.Vocab.String() != vocab.String() || ck.Extra["tinygpt.x"] != "y" || len(ck.Extra) != 1 || ck.Warning != "" {
				t.Errorf("%v %s: loaded %v, step %d, optimizer %v, vocabulary %q, extra %v, warning %q", f, cfg.describe(), got.Weights(), ck.Step, ck.Opt != nil, ck.Vocab, ck.Extra, ck.Warning)
			}
			if f == WeightsF32 {
				if !equalF32(got.Params, m.Params) {
					t.Errorf("%s: float32 parameters differ", cfg.describe())
				}
			} else if err := sameLowModel(got, m); err != nil {
				t.Errorf("%v %s: %v", f, cfg.describe(), err)
			}
			prompt := []int32{1, 2, 3}
			if a, b := greedy(t, got, prompt, 5), greedy(t, m, prompt, 5); !slices.Equal(a, b) {
				t.Errorf("%v %s: greedy tokens %v, the saved model's %v", f, cfg.describe(), a, b)
			}
			if _, err := ck.Resume(nil); err == nil {
				t.Errorf("%v %s: Resume of a checkpoint without optimizer state succeeded", f, cfg.describe())
			}
		}
	}
}

// TestSaveWeightsLayout pins the documented layout of the converted
// tensors: the int8 weights and scales as lowbit's blocks hold them, the
// bf16 matrix as lowbit's Data, the head under w_lm for a tied model.
func TestSaveWeightsLayout(t *testing.T) {
	cfg := weightsConfigs[2] // width 20: one padded group a row
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		m := weightsModel(t, cfg, f)
		path := filepath.Join(t.TempDir(), "w.safetensors")
		if err := m.SaveWeights(path, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := safetensors.Verify(b)
		if err != nil {
			t.Fatal(err)
		}
		if h.Metadata[MetaWeights] != f.String() {
			t.Errorf("%v: metadata %s = %q", f, MetaWeights, h.Metadata[MetaWeights])
		}
		byName := map[string]safetensors.Entry{}
		for _, e := range h.Tensors {
			byName[e.Name] = e
		}
		bytesOf := func(name string) []byte {
			e, ok := byName[name]
			if !ok {
				t.Fatalf("%v: no tensor %q", f, name)
			}
			return b[h.DataStart+e.Start : h.DataStart+e.End]
		}
		if _, ok := byName["h.0.attn.w_qkv"+scaleSuffix]; ok != (f == WeightsInt8) {
			t.Errorf("%v: scale tensor present: %v", f, ok)
		}
		head := m.head
		if e := byName[lowHead]; !slices.Equal(e.Shape, []int{cfg.Vocab, 32}) {
			t.Errorf("%v: w_lm has shape %v, want [%d 32]", f, e.Shape, cfg.Vocab)
		}
		q := bytesOf(lowHead)
		if f == WeightsBF16 {
			for i, v := range head.bf.Data {
				if got := binary.LittleEndian.Uint16(q[2*i:]); got != v {
					t.Fatalf("bf16 w_lm element %d is %#04x, want %#04x", i, got, v)
				}
			}
			continue
		}
		sc := bytesOf(lowHead + scaleSuffix)
		for i, blk := range head.i8.Blocks {
			if s := math.Float32frombits(binary.LittleEndian.Uint32(sc[4*i:])); s != blk.Scale {
				t.Fatalf("int8 w_lm scale %d is %v, want %v", i, s, blk.Scale)
			}
			for j, v := range blk.Q {
				if int8(q[32*i+j]) != v {
					t.Fatalf("int8 w_lm block %d weight %d is %d, want %d", i, j, int8(q[32*i+j]), v)
				}
			}
		}
	}
}

// editWeights re-encodes the converted checkpoint b (with a valid
// checksum) after edit has changed its tensors' bytes, dtypes or shapes
// (by name) and its metadata: a file written by a buggy tool.
func editWeights(t *testing.T, b []byte, edit func(ts map[string]*safetensors.Raw, meta map[string]string)) []byte {
	t.Helper()
	h, err := safetensors.Verify(b)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	ts := map[string]*safetensors.Raw{}
	for _, e := range h.Tensors {
		order = append(order, e.Name)
		ts[e.Name] = &safetensors.Raw{Name: e.Name, DType: e.DType, Shape: e.Shape, Data: slices.Clone(b[h.DataStart+e.Start : h.DataStart+e.End])}
	}
	meta := h.Metadata
	delete(meta, safetensors.ChecksumKey)
	edit(ts, meta)
	var raw []safetensors.Raw
	for _, n := range order {
		if r, ok := ts[n]; ok {
			raw = append(raw, *r)
		}
	}
	for n, r := range ts {
		if !slices.Contains(order, n) {
			raw = append(raw, *r)
		}
	}
	out, err := safetensors.EncodeRaw(raw, meta)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadWeightsRejects: converted checkpoints whose tensors or metadata
// are wrong (with a valid checksum) are refused, naming the file and what
// is wrong; every bit of a good one is covered by the checksum.
func TestLoadWeightsRejects(t *testing.T) {
	cfg := weightsConfigs[2] // width 20: padded groups
	dir := t.TempDir()
	good := map[Weights][]byte{}
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		p := filepath.Join(dir, f.String())
		if err := weightsModel(t, cfg, f).SaveWeights(p, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		good[f] = b
	}
	const qkv = "h.0.attn.w_qkv"
	for _, c := range []struct {
		name string
		f    Weights
		edit func(ts map[string]*safetensors.Raw, meta map[string]string)
		want string
	}{
		{"weights metadata fp8", WeightsInt8, func(_ map[string]*safetensors.Raw, m map[string]string) { m[MetaWeights] = "fp8" }, `bad weights metadata "fp8"`},
		{"weights metadata f32", WeightsBF16, func(_ map[string]*safetensors.Raw, m map[string]string) { m[MetaWeights] = "f32" }, `bad weights metadata "f32"`},
		{"int8 read as bf16", WeightsInt8, func(_ map[string]*safetensors.Raw, m map[string]string) { m[MetaWeights] = "bf16" }, `tensor "h.0.attn.w_qkv" has dtype I8; a bf16 checkpoint's is BF16`},
		{"bf16 read as float32", WeightsBF16, func(_ map[string]*safetensors.Raw, m map[string]string) { delete(m, MetaWeights) }, `tensor "h.0.attn.w_qkv" has dtype BF16, not F32`},
		{"missing scales", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) { delete(ts, qkv+scaleSuffix) }, `tensor "h.0.attn.w_qkv.scale" is missing`},
		{"missing head", WeightsBF16, func(ts map[string]*safetensors.Raw, _ map[string]string) { delete(ts, lowHead) }, `tensor "w_lm" is missing`},
		{"scales of bf16", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) { ts[qkv+scaleSuffix].DType = "I32" }, `tensor "h.0.attn.w_qkv.scale" has dtype I32; a int8 checkpoint's is F32`},
		{"float32 tensor as BF16", WeightsBF16, func(ts map[string]*safetensors.Raw, _ map[string]string) {
			r := ts["wpe"]
			r.DType, r.Data = "BF16", r.Data[:len(r.Data)/2]
		}, `tensor "wpe" has dtype BF16, not F32`},
		{"unpadded shape", WeightsBF16, func(ts map[string]*safetensors.Raw, _ map[string]string) {
			r := ts[qkv]
			r.Shape = []int{60, 20}
			r.Data = r.Data[:60*20*2]
		}, `tensor "h.0.attn.w_qkv" has shape [60 20], the config needs [60 32]`},
		{"int8 -128", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) { ts[qkv].Data[32+3] = 0x80 }, `tensor "h.0.attn.w_qkv": weight [1, 3] is -128`},
		{"int8 padding", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) { ts[qkv].Data[31] = 1 }, `tensor "h.0.attn.w_qkv": weight [0, 31] is 1`},
		{"bf16 padding", WeightsBF16, func(ts map[string]*safetensors.Raw, _ map[string]string) { ts[qkv].Data[2*31] = 1 }, `tensor "h.0.attn.w_qkv": padding weight [0, 31] is 0x0001, not +0`},
		{"NaN scale", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) {
			binary.LittleEndian.PutUint32(ts[qkv+scaleSuffix].Data[4:], 0x7fc00000)
		}, `tensor "h.0.attn.w_qkv.scale": scale [1, 0] is NaN`},
		{"negative scale", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) {
			binary.LittleEndian.PutUint32(ts[lowHead+scaleSuffix].Data[0:], math.Float32bits(-1))
		}, `tensor "w_lm.scale": scale [0, 0] is -1`},
		{"infinite scale", WeightsInt8, func(ts map[string]*safetensors.Raw, _ map[string]string) {
			binary.LittleEndian.PutUint32(ts[lowHead+scaleSuffix].Data[0:], 0x7f800000)
		}, `scale [0, 0] is +Inf`},
		{"optimizer state", WeightsBF16, func(ts map[string]*safetensors.Raw, _ map[string]string) {
			n := cfg.NumParams()
			ts[optMPrefix] = &safetensors.Raw{Name: optMPrefix, DType: "F32", Shape: []int{n}, Data: make([]byte, 4*n)}
			ts[optVPrefix] = &safetensors.Raw{Name: optVPrefix, DType: "F32", Shape: []int{n}, Data: make([]byte, 4*n)}
		}, "optimizer state with bf16 weights"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(p, editWeights(t, good[c.f], c.edit), 0o644); err != nil {
			t.Fatal(err)
		}
		ck, err := Load(p)
		if err == nil || ck != nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Load = %v; want an error naming the file and containing %q", c.name, err, c.want)
		}
	}
	for f, b := range good {
		for i := range b {
			if skipByte(i) {
				continue
			}
			c := slices.Clone(b)
			c[i] ^= 1 << (i % 8)
			if ck, err := decodeCheckpoint(c); err == nil || ck != nil {
				t.Fatalf("%v: byte %d bit %d flipped: loaded without error", f, i, i%8)
			}
		}
	}
	m := weightsModel(t, cfg, WeightsInt8)
	p := filepath.Join(dir, "reserved")
	for _, key := range []string{MetaWeights, MetaStep} {
		if err := m.SaveWeights(p, nil, 0, map[string]string{key: "x"}); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("SaveWeights with extra key %q: %v", key, err)
		}
	}
	if err := m.SaveWeights(p, nil, -1, nil); err == nil || !strings.Contains(err.Error(), "step -1") {
		t.Errorf("SaveWeights with step -1: %v", err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Errorf("a refused SaveWeights wrote %s", p)
	}
}

// TestCheckInt8Group finds the first weight of -128, and in a row's last
// group the first padding weight that is not 0, wherever they are, and
// accepts every other group.
func TestCheckInt8Group(t *testing.T) {
	type tc struct {
		name string
		q    [32]byte
		last bool
		pad  int
		want int
	}
	var cases []tc
	ok := [32]byte{}
	for j := range ok {
		ok[j] = byte(int8(j*9 - 127)) // -127..152 wraps: every byte but 0x80
		if ok[j] == 0x80 {
			ok[j] = 0x7f
		}
	}
	cases = append(cases, tc{"valid", ok, false, 0, -1}, tc{"valid last group without padding", ok, true, 0, -1})
	for _, at := range []int{0, 1, 7, 8, 15, 16, 23, 24, 31} {
		q := ok
		q[at] = 0x80
		cases = append(cases, tc{fmt.Sprintf("-128 at %d", at), q, false, 0, at})
		q2 := q
		q2[31] = 0x80
		cases = append(cases, tc{fmt.Sprintf("-128 at %d and 31", at), q2, false, 0, at})
		q3 := ok
		q3[at] = 0x81 // -127: the neighbour of 0x80 the word test must not flag
		cases = append(cases, tc{fmt.Sprintf("-127 at %d", at), q3, false, 0, -1})
	}
	padded := ok
	for j := 20; j < 32; j++ {
		padded[j] = 0
	}
	cases = append(cases, tc{"zero padding", padded, true, 12, -1}, tc{"padding ignored in an inner group", ok, false, 12, -1})
	bad := padded
	bad[25] = 1
	cases = append(cases, tc{"nonzero padding", bad, true, 12, 25})
	bad = padded
	bad[3] = 0x80
	cases = append(cases, tc{"-128 before padding", bad, true, 12, 3})
	for _, c := range cases {
		if got := checkInt8Group(c.q[:], c.last, c.pad); got != c.want {
			t.Errorf("%s: checkInt8Group = %d, want %d", c.name, got, c.want)
		}
	}
}
