package gpt

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/memtest"
	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// lowMatrixBits returns the matrix of linear x as float32 bits, row j of its
// n outputs along its k inputs.
func lowMatrixBits(x linear) []uint32 {
	var w []float32
	if x.bf != nil {
		w = x.bf.Float32()
	} else {
		w = x.i8.Float32()
	}
	b := make([]uint32, len(w))
	for i, v := range w {
		b[i] = math.Float32bits(v)
	}
	return b
}

// sameLowModel reports how a differs from b, two low-bit models: format,
// matrices (bit for bit, int8 scales included), float32 parameters.
func sameLowModel(a, b *Model) error {
	if a.Weights() != b.Weights() || a.Config != b.Config {
		return fmt.Errorf("%v model %+v, want %v %+v", a.Weights(), a.Config, b.Weights(), b.Config)
	}
	eq := func(what string, x, y linear) error {
		if x.k != y.k || x.n != y.n || !equalF32(x.bias, y.bias) {
			return fmt.Errorf("%s: shape %d×%d or bias differs from %d×%d", what, x.k, x.n, y.k, y.n)
		}
		if x.i8 != nil {
			for i := range x.i8.Blocks {
				if x.i8.Blocks[i] != y.i8.Blocks[i] {
					return fmt.Errorf("%s: int8 block %d differs", what, i)
				}
			}
			return nil
		}
		for i, v := range x.bf.Data {
			if v != y.bf.Data[i] {
				return fmt.Errorf("%s: bf16 element %d is %#04x, want %#04x", what, i, v, y.bf.Data[i])
			}
		}
		return nil
	}
	for l := range a.lin {
		x, y := a.lin[l], b.lin[l]
		for _, c := range []struct {
			name string
			x, y linear
		}{{"qkv", x.qkv, y.qkv}, {"proj", x.proj, y.proj}, {"fc", x.fc, y.fc}, {"out", x.out, y.out}} {
			if err := eq("block "+strconv.Itoa(l)+" "+c.name, c.x, c.y); err != nil {
				return err
			}
		}
	}
	if err := eq("head", a.head, b.head); err != nil {
		return err
	}
	sa, sb := map[string][]float32{}, map[string][]float32{}
	a.Config.eachTensor(&a.p, func(name string, _ []int, _ initKind, f *[]float32) { sa[name] = *f })
	b.Config.eachTensor(&b.p, func(name string, _ []int, _ initKind, f *[]float32) { sb[name] = *f })
	for name, v := range sa {
		if !equalF32(v, sb[name]) {
			return fmt.Errorf("float32 tensor %s differs", name)
		}
	}
	return nil
}

// TestLoadGPT2Weights loads the test GPT-2 of every format with
// WithLoadWeights(bf16) and (int8), on every kernel implementation, and
// checks it against the float32 load converted by WithWeights: the same
// matrices and float32 tensors bit for bit, the same logits bit for bit.
// From the BF16 file, the bf16 matrices hold the file's values exactly.
func TestLoadGPT2Weights(t *testing.T) {
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
	tok := randTokens(rng.New(7), 2*s.T, s.V)
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		for i, file := range files {
			m32, err := LoadGPT2(paths[i], WithImpl(k))
			if err != nil {
				t.Fatalf("%s: %v", file.name, err)
			}
			for _, f := range []Weights{WeightsBF16, WeightsInt8} {
				want, err := m32.WithWeights(f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := LoadGPT2(paths[i], WithImpl(k), WithLoadWeights(f))
				if err != nil {
					t.Fatalf("%s, %v: %v", file.name, f, err)
				}
				if got.Impl() != k {
					t.Fatalf("%s, %v: computes on %v, want %v", file.name, f, got.Impl(), k)
				}
				if err := sameLowModel(got, want); err != nil {
					t.Fatalf("%s, %v: loaded directly, %v", file.name, f, err)
				}
				got.Forward(tok, nil, 2, s.T)
				want.Forward(tok, nil, 2, s.T)
				if !equalF32(got.Logits(), want.Logits()) {
					t.Fatalf("%s, %v: logits differ from WithWeights'", file.name, f)
				}
				if file.name != "safetensors BF16" || f != WeightsBF16 {
					continue
				}
				// The file's values, HF's [in][out] = [k][n].
				for l := 0; l < s.L; l++ {
					for _, c := range []struct {
						name string
						x    linear
					}{
						{"attn.c_attn.weight", got.lin[l].qkv}, {"attn.c_proj.weight", got.lin[l].proj},
						{"mlp.c_fc.weight", got.lin[l].fc}, {"mlp.c_proj.weight", got.lin[l].out},
					} {
						name := "h." + strconv.Itoa(l) + "." + c.name
						v, b := file.params.t[name], lowMatrixBits(c.x)
						for p := 0; p < c.x.k; p++ {
							for j := 0; j < c.x.n; j++ {
								if w := math.Float32bits(float32(v[p*c.x.n+j])); b[j*c.x.k+p] != w || w&0xffff != 0 {
									t.Fatalf("%s [%d, %d]: bf16 %#08x, the file's %#08x", name, p, j, b[j*c.x.k+p], w)
								}
							}
						}
					}
				}
			}
		}
	})
	// A value that is not a format.
	if _, err := LoadGPT2(paths[0], WithLoadWeights(Weights(7))); err == nil || err.Error() != "gpt.LoadGPT2 "+paths[0]+": WithLoadWeights(Weights(7)): not a weights format" {
		t.Errorf("WithLoadWeights(7): %v", err)
	}
}

// TestLoadGPT2WeightsMemory measures the memory of loading a GPT-2 whose
// matrices take 28 MB in float32 (4 layers, width 384) in bf16 and int8
// both ways: LoadGPT2 with WithLoadWeights must stay below the float32
// matrices' size (it holds no float32 model), and load-then-WithWeights,
// which holds the float32 model (with its gradients) and the low-bit one,
// above the float32 model's parameters. The collector runs at GOGC 20
// during both, so that what is measured is the memory held.
func TestLoadGPT2WeightsMemory(t *testing.T) {
	if race.Enabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random: the peak memory are not the program's")
	}
	s := gpt2Spec{L: 4, H: 4, C: 384, V: 64, T: 16}
	p := randomGPT2(s, 3, roundF32)
	path, err := writeFiles(t.TempDir(), HFFile, map[string][]byte{HFFile: writeHF(p, "F32", hfOptions{}), HFConfigFile: []byte(`{"n_head": 4}`)})
	if err != nil {
		t.Fatal(err)
	}
	p = nil
	cfg := Config{Vocab: s.V, BlockSize: s.T, Layers: s.L, Heads: s.H, Width: s.C, TieEmbeddings: true}
	matrixBytes := 4 * int64(s.L) * 12 * int64(s.C) * int64(s.C)
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		runtime.GC()
		direct := memtest.PeakGrowth(func() {
			var m *Model
			m, err = LoadGPT2(path, WithLoadWeights(f))
			runtime.KeepAlive(m)
		})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		twoStep := memtest.PeakGrowth(func() {
			var m32, m *Model
			if m32, err = LoadGPT2(path); err == nil {
				m, err = m32.WithWeights(f)
			}
			runtime.KeepAlive(m)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: loaded directly, the memory grew by %d bytes at its peak; loaded as float32 and converted, by %d (float32 matrices %d bytes, the %v model %d)", f, direct, twoStep, matrixBytes, f, InferenceBytes(cfg, f))
		if direct >= matrixBytes {
			t.Errorf("%v: loading directly grew the memory by %d bytes at its peak, not below the float32 matrices' %d", f, direct, matrixBytes)
		}
		if params := 4 * int64(cfg.NumParams()); twoStep < params {
			t.Errorf("%v: loading as float32 and converting grew the memory by %d bytes at its peak, below the float32 parameters' %d: the measure does not see the float32 model", f, twoStep, params)
		}
	}
}
