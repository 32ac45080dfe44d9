package gpt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// TestBatchMatchesAlone decodes six sequences together and checks that
// each one's tokens are those Sampler.GenerateWith gives it alone with
// the same seed: greedy and sampled (temperature, top-k, top-p), in every
// weight format, with an untied and a tied head, on every kernel
// implementation. The prompts have different lengths (one beyond the
// block), so the sequences sit at different positions and their caches
// fill, and are rebuilt, at different steps, leaving some steps with only
// some of the rows. The last logits of each must equal the lone
// sampler's: bitwise with the generic kernels, otherwise within 1e-4
// (1e-3 with int8 weights, whose one-row products on some CPUs skip the
// many-row products' quantization of the activations).
func TestBatchMatchesAlone(t *testing.T) {
	kernelstest.ForEach(t, testBatchMatchesAlone)
}

func testBatchMatchesAlone(t *testing.T, k *kernels.Impl) {
	prompts := [][]int32{{1}, {4, 9, 2}, {7, 7, 7, 7, 7, 7, 7}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}, {2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5, 2, 3, 5, 3}, {0, 11}}
	const n = 40
	for _, tie := range []bool{false, true} {
		cfg := Config{Vocab: 60, BlockSize: 16, Layers: 2, Heads: 2, Width: 32, TieEmbeddings: tie}
		base, err := New(cfg, 7, WithImpl(k))
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(2)
		for i := range base.Params {
			base.Params[i] += float32(r.Normal() * 0.2)
		}
		for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
			m := base
			if f != WeightsF32 {
				if m, err = base.WithWeights(f); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range []SampleOptions{{}, {Temperature: 0.8}, {Temperature: 1, TopK: 10}, {Temperature: 0.9, TopP: 0.8}} {
				name := fmt.Sprintf("tie=%v weights=%v %+v", tie, f, o)
				rs := make([]*rng.RNG, len(prompts))
				for i := range rs {
					rs[i] = rng.New(uint64(100 + i))
				}
				b := m.NewBatchSampler(len(prompts))
				got := make([][]int32, len(prompts))
				err := b.GenerateWith(prompts, n, o, rs, func(i int, tok int32) error {
					got[i] = append(got[i], tok)
					return nil
				})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				distinct := map[string]bool{}
				for i, p := range prompts {
					s := m.NewSampler()
					var want []int32
					if err := s.GenerateWith(p, n, o, rng.New(uint64(100+i)), func(tok int32) error { want = append(want, tok); return nil }); err != nil {
						t.Fatalf("%s, alone %d: %v", name, i, err)
					}
					if !slices.Equal(got[i], want) {
						t.Errorf("%s: sequence %d decoded together\n%v\nalone\n%v", name, i, got[i], want)
						continue
					}
					distinct[fmt.Sprint(want)] = true
					lane, tol := b.lanes[i].logits, 1e-4
					bitwise := k.Name() == "generic"
					if f == WeightsInt8 {
						tol = 1e-3 // the one-row kernel may not quantize the activations
						// amd64's int8 kernels of every r give a row what the one-row kernel does.
						bitwise = bitwise || k.Name() == "avx2" || k.Name() == "avx512"
					}
					for j, w := range s.logits {
						if d := math.Abs(float64(lane[j] - w)); (bitwise && lane[j] != w) || d > tol {
							t.Errorf("%s: sequence %d's last logit %d = %g together, %g alone", name, i, j, lane[j], w)
							break
						}
					}
				}
				if len(distinct) < 3 {
					t.Errorf("%s: the %d sequences give only %d different texts: the test cannot tell them apart", name, len(prompts), len(distinct))
				}
			}
		}
	}
}

// TestBatchOneIsSampler checks that a batch of one sequence gives the
// tokens of the lone sampler, run after run from one BatchSampler (its
// caches reset by each GenerateWith).
func TestBatchOneIsSampler(t *testing.T) {
	cfg := Config{Vocab: 30, BlockSize: 8, Layers: 1, Heads: 2, Width: 16}
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	b := m.NewBatchSampler(1)
	for run, o := range []SampleOptions{{Temperature: 1}, {}, {Temperature: 0.7, TopP: 0.9}} {
		var got, want []int32
		if err := b.GenerateWith([][]int32{{1, 2, 3}}, 20, o, []*rng.RNG{rng.New(5)}, func(_ int, tok int32) error { got = append(got, tok); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := m.NewSampler().GenerateWith([]int32{1, 2, 3}, 20, o, rng.New(5), func(tok int32) error { want = append(want, tok); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("run %d, %+v: batch of one %v, sampler %v", run, o, got, want)
		}
	}
}

// TestBatchSamplerBadArgs checks the panics (wrong counts, nil
// generators) and errors (prompts and options GenerateWith refuses, an
// error from emit) of the batch sampler.
func TestBatchSamplerBadArgs(t *testing.T) {
	cfg := Config{Vocab: 10, BlockSize: 8, Layers: 1, Heads: 1, Width: 8}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, -3} {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			m.NewBatchSampler(n)
			return ""
		}()
		if want := fmt.Sprintf("gpt.Model.NewBatchSampler: n = %d sequences", n); !strings.HasPrefix(msg, want) {
			t.Errorf("NewBatchSampler(%d): panic %q, want %q", n, msg, want)
		}
	}
	b := m.NewBatchSampler(2)
	ok := [][]int32{{1}, {2}}
	rs := func() []*rng.RNG { return []*rng.RNG{rng.New(1), rng.New(2)} }
	none := func(int, int32) error { return nil }
	for _, c := range []struct {
		name    string
		prompts [][]int32
		rs      []*rng.RNG
		want    string
	}{
		{"one prompt", ok[:1], rs(), "len(prompts) = 1, the sampler decodes 2 sequences"},
		{"three prompts", [][]int32{{1}, {2}, {3}}, rs(), "len(prompts) = 3, the sampler decodes 2 sequences"},
		{"one generator", ok, rs()[:1], "len(rs) = 1, the sampler decodes 2 sequences"},
		{"nil generator", ok, []*rng.RNG{rng.New(1), nil}, "rs[1] is nil"},
	} {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			b.GenerateWith(c.prompts, 3, SampleOptions{}, c.rs, none)
			return ""
		}()
		if !strings.HasPrefix(msg, "gpt.BatchSampler.GenerateWith: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: panic %q, want one naming %q", c.name, msg, c.want)
		}
	}
	for _, c := range []struct {
		name    string
		prompts [][]int32
		o       SampleOptions
		want    string
	}{
		{"empty prompt", [][]int32{{1}, {}}, SampleOptions{}, "sequence 1: gpt: Generate needs a prompt"},
		{"token past the vocabulary", [][]int32{{10}, {1}}, SampleOptions{}, "sequence 0: gpt: prompt token 10 is outside"},
		{"negative token", [][]int32{{1}, {-1}}, SampleOptions{}, "sequence 1: gpt: prompt token -1 is outside"},
		{"negative temperature", ok, SampleOptions{Temperature: -1}, "temperature -1 must be >= 0"},
		{"NaN temperature", ok, SampleOptions{Temperature: math.NaN()}, "temperature NaN must be >= 0"},
		{"top-p above 1", ok, SampleOptions{Temperature: 1, TopP: 1.5}, "top-p 1.5 must be in [0, 1]"},
	} {
		err := b.GenerateWith(c.prompts, 3, c.o, rs(), none)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	stop := errors.New("stop")
	calls := 0
	err = b.GenerateWith(ok, 5, SampleOptions{Temperature: 1}, rs(), func(i int, _ int32) error {
		if calls++; calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("emit failing at its third call: error %v after %d calls, want stop after 3", err, calls)
	}
}

// TestBatchSampleBytes checks that the memory estimate of a batch grows
// with the sequences by at least their key/value caches, and that one
// sequence costs what a Sampler does.
func TestBatchSampleBytes(t *testing.T) {
	for _, f := range []Weights{WeightsF32, WeightsInt8} {
		c := gpt2Small
		one := BatchSampleBytesWeights(c, f, 1)
		if want := SampleBytesWeights(c, f); one != want {
			t.Errorf("%v: one sequence %d bytes, a Sampler %d", f, one, want)
		}
		caches := int64(2 * 4 * c.Layers * c.BlockSize * c.Width)
		for _, n := range []int{2, 8, 64} {
			if got := BatchSampleBytesWeights(c, f, n); got-one < int64(n-1)*caches {
				t.Errorf("%v: %d sequences %d bytes, one %d: less than %d caches of %d more", f, n, got, one, n-1, caches)
			}
		}
	}
}
