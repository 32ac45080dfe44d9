package gpt

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// kvBF16LogitTol bounds, relative to the largest |logit|, how far a
// sampler on bf16 key/value caches moves the logits of
// TestSamplerKVCacheBF16's model from the float32 caches' (keys and values
// rounded to 2⁻⁹; measured 0.004-0.006 on amd64).
const kvBF16LogitTol = 2e-2

// TestSamplerKVCacheBF16 checks SetKVCache on every implementation and
// weight format: the samplers made after it decode on bf16 caches (and
// those made before keep theirs), their logits after prompts that end
// inside and past the first block of 32 cached positions stay within
// kvBF16LogitTol of the float32 caches', and a batch of sequences on bf16
// caches draws, greedy and sampled, each sequence's tokens decoded alone
// on bf16 caches, through a rebuild of the caches at the block size.
func TestSamplerKVCacheBF16(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		cfg := Config{Vocab: 60, BlockSize: 40, Layers: 2, Heads: 2, Width: 64}
		base, err := New(cfg, 5, WithImpl(k))
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(3)
		for i := range base.Params {
			base.Params[i] += float32(r.Normal() * 0.2)
		}
		prompt := make([]int32, cfg.BlockSize)
		for i := range prompt {
			prompt[i] = int32(r.Intn(cfg.Vocab))
		}
		for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
			if err := base.SetKVCache(attention.KVFloat32); err != nil {
				t.Fatal(err)
			}
			m := base
			if f != WeightsF32 {
				if m, err = base.WithWeights(f); err != nil {
					t.Fatal(err)
				}
			}
			f32 := m.NewSampler()
			if err := m.SetKVCache(attention.KVBF16); err != nil {
				t.Fatal(err)
			}
			bf := m.NewSampler()
			if got := bf.caches[0].KVCache(); got != attention.KVBF16 {
				t.Fatalf("weights %v: a sampler made after SetKVCache(bf16) has a %v cache", f, got)
			}
			if got := f32.caches[0].KVCache(); got != attention.KVFloat32 {
				t.Fatalf("weights %v: a sampler made before SetKVCache(bf16) has a %v cache", f, got)
			}
			var worst float64
			for _, n := range []int{1, 9, 31, 32, 33, 40} {
				want := slices.Clone(f32.Logits(prompt[:n]))
				got := bf.Logits(prompt[:n])
				var top, diff float64
				for j, w := range want {
					top = math.Max(top, math.Abs(float64(w)))
					diff = math.Max(diff, math.Abs(float64(got[j]-w)))
				}
				if !(diff <= kvBF16LogitTol*top) || diff == 0 && n > 1 {
					t.Errorf("weights %v, prompt of %d: logits on bf16 caches %g from float32's, largest |logit| %g (bound %g of it; 0 means the caches are not bf16)", f, n, diff, top, kvBF16LogitTol)
				}
				worst = math.Max(worst, diff/top)
			}
			t.Logf("weights %v: logits on bf16 caches within %.2g of the largest", f, worst)

			prompts := [][]int32{prompt[:3], prompt[:33], {7}}
			for _, o := range []SampleOptions{{}, {Temperature: 0.9, TopK: 20}} {
				name := fmt.Sprintf("weights %v %+v", f, o)
				rs := make([]*rng.RNG, len(prompts))
				for i := range rs {
					rs[i] = rng.New(uint64(40 + i))
				}
				got := make([][]int32, len(prompts))
				const n = 30 // the second prompt's caches are rebuilt
				if err := m.NewBatchSampler(len(prompts)).GenerateWith(prompts, n, o, rs, func(i int, tok int32) error {
					got[i] = append(got[i], tok)
					return nil
				}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for i, p := range prompts {
					var want []int32
					if err := m.NewSampler().GenerateWith(p, n, o, rng.New(uint64(40+i)), func(tok int32) error { want = append(want, tok); return nil }); err != nil {
						t.Fatalf("%s, alone %d: %v", name, i, err)
					}
					if !slices.Equal(got[i], want) {
						t.Errorf("%s: sequence %d on bf16 caches decoded together\n%v\nalone\n%v", name, i, got[i], want)
					}
				}
			}
		}
	})
}

func TestSetKVCache(t *testing.T) {
	m, err := New(Config{Vocab: 16, BlockSize: 8, Layers: 1, Heads: 2, Width: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.KVCache() != attention.KVFloat32 {
		t.Errorf("a new model's KVCache() = %v, want f32", m.KVCache())
	}
	if err := m.SetKVCache(attention.KVCache(9)); err == nil || err.Error() != "gpt: SetKVCache(KVCache(9)): not a key/value cache format" {
		t.Errorf("SetKVCache(9): error %v", err)
	}
	if err := m.SetKVCache(attention.KVBF16); err != nil {
		t.Fatal(err)
	}
	low, err := m.WithWeights(WeightsInt8)
	if err != nil {
		t.Fatal(err)
	}
	if low.KVCache() != attention.KVBF16 {
		t.Errorf("WithWeights dropped the bf16 cache setting: %v", low.KVCache())
	}
	for _, tc := range []struct {
		positions int
		kv        attention.KVCache
		want      int64
	}{
		{512, attention.KVFloat32, 8 * 12 * 768 * 512},
		{512, attention.KVBF16, 4 * 12 * 768 * 512},
	} {
		gpt2 := Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
		if got := TokenCacheBytesKV(gpt2, tc.positions, tc.kv); got != tc.want {
			t.Errorf("TokenCacheBytesKV(GPT-2, %d, %v) = %d, want %d", tc.positions, tc.kv, got, tc.want)
		}
	}
}
