package gpt

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// lowbitTestModel returns a model of cfg computing with k, its weights
// New's times 5 (LayerNorm gains kept at 1) so that the activations are
// far from 0.
func lowbitTestModel(t *testing.T, k *kernels.Impl, cfg Config) *Model {
	t.Helper()
	m, err := New(cfg, 7, WithImpl(k))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range cfg.Tensors() {
		if strings.HasSuffix(x.Name, "ln1.w") || strings.HasSuffix(x.Name, "ln2.w") || x.Name == "ln_f.w" {
			continue
		}
		for i := range m.Params[x.Offset : x.Offset+x.Size()] {
			m.Params[x.Offset+i] *= 5
		}
	}
	return m
}

// dequantized returns a float32 model (untied) whose matrices are low's
// converted ones read back: the model low computes, in float32.
func dequantized(t *testing.T, m, low *Model) *Model {
	t.Helper()
	d, err := newModel(m.Config, WithImpl(m.k))
	if err != nil {
		t.Fatal(err)
	}
	copy(d.Params, m.Params)
	back := func(dst []float32, w *linear) {
		var nk []float32
		if w.bf != nil {
			nk = w.bf.Float32()
		} else {
			nk = w.i8.Float32()
		}
		for j := 0; j < w.n; j++ {
			for p := 0; p < w.k; p++ {
				dst[p*w.n+j] = nk[j*w.k+p]
			}
		}
	}
	for l := range d.p.blocks {
		b, lw := &d.p.blocks[l], &low.lin[l]
		back(b.wqkv, &lw.qkv)
		back(b.wproj, &lw.proj)
		back(b.wfc, &lw.fc)
		back(b.wout, &lw.out)
	}
	back(d.p.wlm, &low.head)
	return d
}

func relDiff(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		num = max(num, math.Abs(float64(got[i])-float64(want[i])))
		den = max(den, math.Abs(float64(want[i])))
	}
	return num / den
}

// weightsUnit is the largest error of a converted weight relative to the
// largest |weight| of its group: half an ulp of bfloat16's 8-bit
// significand, or half a step of int8's 127 levels.
func weightsUnit(f Weights) float64 {
	if f == WeightsBF16 {
		return math.Pow(2, -8)
	}
	return 0.5 / 127
}

// sameWeightsTol is the relative difference allowed between two
// computations over the same converted weights (the Sampler against
// Forward, and against the float32 model of the dequantized weights):
// float32 rounding for bf16; for int8 also the products' rounding of
// activations to int16 (half a step of 32767 levels of each row's
// largest |element|, 1.5e-5 of it per product), compounded over the
// (4·Layers+1) products of up to 3 layers.
func sameWeightsTol(f Weights) float64 {
	if f == WeightsBF16 {
		return 1e-5
	}
	return 2e-4
}

// TestWeightsLogits compares the logits of low-bit models, from the
// Sampler and from Forward, with (a) the float32 model of the same
// converted weights (the same computation up to float32 rounding) and
// (b) the original float32 model, within (4·Layers+1) products each off
// by at most weightsUnit of the logits' scale.
func TestWeightsLogits(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		for _, cfg := range []Config{
			{Vocab: 37, BlockSize: 24, Layers: 2, Heads: 4, Width: 64},
			{Vocab: 50, BlockSize: 16, Layers: 1, Heads: 1, Width: 40, TieEmbeddings: true}, // K not a multiple of 32
			{Vocab: 29, BlockSize: 16, Layers: 3, Heads: 2, Width: 48},
		} {
			m := lowbitTestModel(t, k, cfg)
			r := rng.New(3)
			toks, tgts := make([]int32, 2*cfg.BlockSize), make([]int32, 2*cfg.BlockSize)
			for i := range toks {
				toks[i], tgts[i] = int32(r.Intn(cfg.Vocab)), int32(r.Intn(cfg.Vocab))
			}
			prompt := toks[:cfg.BlockSize-3]
			want := append([]float32(nil), m.NewSampler().Logits(prompt)...)
			wantLoss := m.Forward(toks, tgts, 2, cfg.BlockSize)
			for _, f := range []Weights{WeightsBF16, WeightsInt8} {
				low, err := m.WithWeights(f)
				if err != nil {
					t.Fatal(err)
				}
				if low.Weights() != f || low.Params != nil || low.Grads != nil {
					t.Fatalf("%v: Weights() = %v, len(Params) = %d, len(Grads) = %d", f, low.Weights(), len(low.Params), len(low.Grads))
				}
				s := low.NewSampler()
				got := append([]float32(nil), s.Logits(prompt)...)
				// The last row of Forward over the prompt: the same logits.
				low.Forward(prompt, nil, 1, len(prompt))
				fwd := low.Logits()[(len(prompt)-1)*cfg.Vocab:]
				if e := relDiff(fwd, got); e > sameWeightsTol(f) {
					t.Errorf("%v %+v: Forward's logits differ from the Sampler's by %.3g (relative)", f, cfg, e)
				}
				bound := float64(4*cfg.Layers+1) * weightsUnit(f)
				e := relDiff(got, want)
				t.Logf("%v %+v: logits off the float32 model's by %.3g of their scale (bound %.3g)", f, cfg, e, bound)
				if e > bound || e == 0 {
					t.Errorf("%v %+v: logits off the float32 model's by %.3g (relative), want in (0, %.3g]", f, cfg, e, bound)
				}
				loss := low.Forward(toks, tgts, 2, cfg.BlockSize)
				if math.Abs(loss-wantLoss) > bound*wantLoss {
					t.Errorf("%v %+v: loss %v, float32 %v: off by more than %.3g", f, cfg, loss, wantLoss, bound)
				}
				if cfg.TieEmbeddings {
					continue // a dequantized tied head would change the embedding
				}
				d := dequantized(t, m, low)
				ref := d.NewSampler().Logits(prompt)
				if e := relDiff(got, ref); e > sameWeightsTol(f) {
					t.Errorf("%v %+v: logits differ from the float32 model of the converted weights by %.3g (relative)", f, cfg, e)
				}
				refLoss := d.Forward(toks, tgts, 2, cfg.BlockSize)
				if math.Abs(loss-refLoss) > sameWeightsTol(f)*refLoss {
					t.Errorf("%v %+v: loss %v, the float32 model of the converted weights %v", f, cfg, loss, refLoss)
				}
			}
		}
	})
}

// TestWeightsGenerate runs greedy generation past the block size (the
// caches rebuilt) with low-bit weights on one and two threads: the same
// tokens, and the same as Logits of the context at each step.
func TestWeightsGenerate(t *testing.T) {
	cfg := Config{Vocab: 31, BlockSize: 12, Layers: 2, Heads: 2, Width: 32}
	m := lowbitTestModel(t, kernels.Default(), cfg)
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		low, err := m.WithWeights(f)
		if err != nil {
			t.Fatal(err)
		}
		var runs [2][]int32
		for i, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			err := low.NewSampler().Generate([]int32{1, 2, 3}, 30, 0, 0, nil, func(tok int32) error {
				runs[i] = append(runs[i], tok)
				return nil
			})
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(runs[0]) != 30 || !slicesEqual(runs[0], runs[1]) {
			t.Errorf("%v: greedy tokens %v on one thread, %v on two", f, runs[0], runs[1])
		}
	}
}

func slicesEqual(a, b []int32) bool {
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

// TestWeightsInferenceOnly checks what a low-bit model refuses.
func TestWeightsInferenceOnly(t *testing.T) {
	cfg := Config{Vocab: 11, BlockSize: 8, Layers: 1, Heads: 1, Width: 32}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if same, err := m.WithWeights(WeightsF32); err != nil || same != m {
		t.Fatalf("WithWeights(f32) = %p, %v; want m itself", same, err)
	}
	low, err := m.WithWeights(WeightsInt8)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		err  error
		want string
	}{
		{"WithWeights twice", func() error { _, err := low.WithWeights(WeightsBF16); return err }(), "gpt: WithWeights(bf16): the model's weights are int8 already"},
		{"WithWeights(f32) of int8", func() error { _, err := low.WithWeights(WeightsF32); return err }(), "gpt: WithWeights(f32): the model's weights are int8 already"},
		{"bad format", func() error { _, err := m.WithWeights(Weights(9)); return err }(), "gpt: WithWeights(Weights(9)): not a weights format"},
		{"WithBlockSize", func() error { _, err := low.WithBlockSize(4); return err }(), "gpt: WithBlockSize: the model's weights are int8, for inference only"},
		{"NewTrainer", func() error { _, err := NewTrainer(low, nil, TrainConfig{BatchSize: 1, MaxIters: 1}); return err }(), "gpt: NewTrainer: the model's weights are int8, for inference only"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.what, tc.err, tc.want)
		}
	}
	toks := []int32{1, 2, 3, 4}
	low.Forward(toks, toks, 1, 4)
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "gpt: Model.Backward: the model's weights are int8, for inference only") {
				t.Errorf("Backward of a low-bit model: panic %v", r)
			}
		}()
		low.Backward()
	}()
	// A weight that is not finite cannot be quantized.
	m.p.blocks[0].wfc[5] = float32(math.Inf(1))
	if _, err := m.WithWeights(WeightsInt8); err == nil || !strings.Contains(err.Error(), "gpt: WithWeights(int8): block 0: lowbit.Int8FromKN: weight (0, 5) = +Inf is not finite") {
		t.Errorf("WithWeights(int8) of an infinite weight: %v", err)
	}
}

func TestParseWeights(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want Weights
		err  string
	}{
		{"f32", WeightsF32, ""}, {"bf16", WeightsBF16, ""}, {"int8", WeightsInt8, ""},
		{"F32", 0, `weights format "F32" is not one of f32, bf16, int8`},
		{"", 0, `weights format "" is not one of f32, bf16, int8`},
		{"fp16", 0, `weights format "fp16" is not one of f32, bf16, int8`},
	} {
		got, err := ParseWeights(tc.s)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("ParseWeights(%q): error %v, want %q", tc.s, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want || got.String() != tc.s):
			t.Errorf("ParseWeights(%q) = %v, %v", tc.s, got, err)
		}
	}
}

// TestInferenceBytes checks the estimate against the bytes a low-bit
// model holds: its float32 slices and its matrices.
func TestInferenceBytes(t *testing.T) {
	for _, cfg := range []Config{
		{Vocab: 37, BlockSize: 24, Layers: 2, Heads: 4, Width: 64},
		{Vocab: 50, BlockSize: 16, Layers: 1, Heads: 1, Width: 40, TieEmbeddings: true},
	} {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := InferenceBytes(cfg, WeightsF32), ModelBytes(cfg, false); got != want {
			t.Errorf("InferenceBytes(f32) = %d, want ModelBytes = %d", got, want)
		}
		for _, f := range []Weights{WeightsBF16, WeightsInt8} {
			low, err := m.WithWeights(f)
			if err != nil {
				t.Fatal(err)
			}
			var held int64
			low.Config.eachTensor(&low.p, func(_ string, _ []int, _ initKind, field *[]float32) { held += 4 * int64(len(*field)) })
			mat := func(w *linear) int64 {
				if w.bf != nil {
					return 2 * int64(len(w.bf.Data))
				}
				return int64(len(w.i8.Blocks)) * int64(36)
			}
			for l := range low.lin {
				b := &low.lin[l]
				held += mat(&b.qkv) + mat(&b.proj) + mat(&b.fc) + mat(&b.out)
			}
			held += mat(&low.head)
			if got := InferenceBytes(cfg, f); got != held {
				t.Errorf("%+v %v: InferenceBytes = %d, the model holds %d", cfg, f, got, held)
			}
		}
	}
}

// TestLowDecodeAllocs decodes one token at a time (Sampler.feed, the
// loop body of GenerateWith without the draw) with float32, bf16 and int8
// weights: a low-bit model may allocate no more a token than the float32
// one, and neither more than once a layer (the attention's score
// workspace, which grows with the context; the row-parallel layers, the
// products and their bias and GELU epilogues allocate nothing at one
// row).
func TestLowDecodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random: the allocation counts are not the program's")
	}
	cfg := Config{Vocab: 96, BlockSize: 64, Layers: 3, Heads: 2, Width: 64, TieEmbeddings: true}
	m, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	allocs := map[Weights]float64{}
	for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
		low, err := m.WithWeights(f)
		if err != nil {
			t.Fatal(err)
		}
		s := low.NewSampler()
		s.Logits([]int32{1, 2, 3})
		one := []int32{4}
		allocs[f] = testing.AllocsPerRun(20, func() { s.feed(one) })
		if allocs[f] > float64(cfg.Layers) {
			t.Errorf("%v: %v allocations a decoded token, more than one a layer (%d)", f, allocs[f], cfg.Layers)
		}
	}
	t.Logf("allocations a token: %v", allocs)
	for _, f := range []Weights{WeightsBF16, WeightsInt8} {
		if allocs[f] > allocs[WeightsF32] {
			t.Errorf("%v: %v allocations a decoded token, float32 %v", f, allocs[f], allocs[WeightsF32])
		}
	}
}

// TestTokenCacheBytes checks TokenCacheBytes against GPT-2 small worked
// out by hand and against the keys and values a Sampler's decoders hold
// for the positions fed.
func TestTokenCacheBytes(t *testing.T) {
	gpt2 := Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
	for _, tc := range []struct {
		positions int
		want      int64
	}{
		{0, 0},
		{1, 2 * 12 * 768 * 4},
		{512, 2 * 12 * 768 * 4 * 512}, // 37,748,736
		{1024, 75497472},
	} {
		if got := TokenCacheBytes(gpt2, tc.positions); got != tc.want {
			t.Errorf("TokenCacheBytes(GPT-2 small, %d) = %d, want %d", tc.positions, got, tc.want)
		}
	}

	cfg := Config{Vocab: 37, BlockSize: 24, Layers: 3, Heads: 4, Width: 64}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSampler()
	s.feed([]int32{1, 2, 3, 4, 5})
	var held int64
	for _, d := range s.caches {
		held += 2 * 4 * int64(d.Len()) * int64(cfg.Width) // keys and values of the filled positions
	}
	if got := TokenCacheBytes(cfg, 5); got != held {
		t.Errorf("TokenCacheBytes(%+v, 5) = %d, the decoders hold %d bytes of filled positions", cfg, got, held)
	}
}

// TestTokenWeightBytes checks TokenWeightBytes against GPT-2 small's
// parameter counts worked out by hand and against what a model holds:
// every byte of its matrices and float32 tensors but the rows of the
// embedding tables a token does not look up (wpe's but one, and wte's
// but one unless wte is the float32 head).
func TestTokenWeightBytes(t *testing.T) {
	// GPT-2 small: 124,439,808 parameters; the blocks' matrices
	// 12·12·768² = 84,934,656; wte 50257·768 = 38,597,376; wpe
	// 1024·768 = 786,432; the rest (biases, LayerNorms) 121,344.
	const mats, wte, rest = 84934656, 38597376, 121344
	gpt2 := Config{Vocab: 50257, BlockSize: 1024, Layers: 12, Heads: 12, Width: 768, TieEmbeddings: true}
	untied := gpt2
	untied.TieEmbeddings = false
	for _, tc := range []struct {
		cfg  Config
		f    Weights
		want int64
	}{
		{gpt2, WeightsF32, 4 * (124439808 - 1023*768)},
		{untied, WeightsF32, 4 * (124439808 + 768*50257 + 50257 - 1023*768 - 50256*768)},
		// The matrices and the head (a copy of wte) at 2 bytes; the rest,
		// a row of wpe and a row of wte at 4.
		{gpt2, WeightsBF16, 2*(mats+wte) + 4*(rest+768+768)},
		// 36 bytes a group of 32 weights (768 and 3072 are multiples of 32).
		{gpt2, WeightsInt8, 36*(mats+wte)/32 + 4*(rest+768+768)},
		// Untied: w_lm in the format, b_lm (50257) in float32.
		{untied, WeightsInt8, 36*(mats+wte)/32 + 4*(rest+50257+768+768)},
	} {
		if got := TokenWeightBytes(tc.cfg, tc.f); got != tc.want {
			t.Errorf("TokenWeightBytes(tied %v, %v) = %d, want %d", tc.cfg.TieEmbeddings, tc.f, got, tc.want)
		}
	}

	for _, cfg := range []Config{
		{Vocab: 37, BlockSize: 24, Layers: 2, Heads: 4, Width: 64},
		{Vocab: 50, BlockSize: 16, Layers: 1, Heads: 1, Width: 40, TieEmbeddings: true},
	} {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		unread := 4 * int64(cfg.BlockSize-1) * int64(cfg.Width) // wpe's other rows
		if !cfg.TieEmbeddings {
			unread += 4 * int64(cfg.Vocab-1) * int64(cfg.Width)
		}
		if got, want := TokenWeightBytes(cfg, WeightsF32), 4*int64(len(m.Params))-unread; got != want {
			t.Errorf("%+v f32: TokenWeightBytes = %d, want %d", cfg, got, want)
		}
		for _, f := range []Weights{WeightsBF16, WeightsInt8} {
			low, err := m.WithWeights(f)
			if err != nil {
				t.Fatal(err)
			}
			// A low-bit head is its own matrix: wte is read a row at a time.
			held := -4 * int64(cfg.BlockSize-1+cfg.Vocab-1) * int64(cfg.Width)
			low.Config.eachTensor(&low.p, func(_ string, _ []int, _ initKind, field *[]float32) { held += 4 * int64(len(*field)) })
			mat := func(w *linear) int64 {
				if w.bf != nil {
					return 2 * int64(len(w.bf.Data))
				}
				return 36 * int64(len(w.i8.Blocks))
			}
			for l := range low.lin {
				b := &low.lin[l]
				held += mat(&b.qkv) + mat(&b.proj) + mat(&b.fc) + mat(&b.out)
			}
			held += mat(&low.head)
			if got := TokenWeightBytes(cfg, f); got != held {
				t.Errorf("%+v %v: TokenWeightBytes = %d, the model holds %d less the unread rows", cfg, f, got, held)
			}
		}
	}
}

// TestInt8Panels holds the products over int8 weights of at least
// int8MinRows rows (linear.int8Panels: the weights dequantized a panel at
// a time) to the float64 product of the rows with the dequantized
// weights, plus beta times the output: within float32 rounding (2e-6 of
// the largest value) with float32 products, within bf16Tol's rounding of
// both operands (1e-2) with bf16 compute; over several panels, the last
// one partial, and K not a multiple of the group size.
func TestInt8Panels(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		for _, tc := range []struct {
			rows, k, n int
			beta       float32
			bf16       bool
			tol        float64
		}{
			{int8MinRows, 70, 2*int8PanelCols + 37, 0, false, 2e-6},
			{40, 64, int8PanelCols, 1, false, 2e-6},
			{33, 96, 300, 0.5, false, 2e-6},
			{int8MinRows, 70, 2*int8PanelCols + 37, 0, true, 1e-2},
			{40, 64, 300, 1, true, 1e-2},
		} {
			r := rng.New(uint64(tc.rows*tc.k + tc.n))
			wf := make([]float32, tc.k*tc.n)
			for i := range wf {
				wf[i] = float32(r.Normal())
			}
			i8, err := lowbit.Int8FromKN(wf, tc.k, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			w := linear{k: tc.k, n: tc.n, i8: i8, bf16: tc.bf16}
			x := make([]float32, tc.rows*tc.k)
			for i := range x {
				x[i] = float32(r.Normal())
			}
			out := make([]float32, tc.rows*tc.n)
			for i := range out {
				out[i] = float32(r.Normal())
			}
			want := make([]float32, len(out))
			deq := i8.Float32() // [n,k]
			for i := 0; i < tc.rows; i++ {
				for j := 0; j < tc.n; j++ {
					s := float64(tc.beta) * float64(out[i*tc.n+j])
					for p := 0; p < tc.k; p++ {
						s += float64(x[i*tc.k+p]) * float64(deq[j*tc.k+p])
					}
					want[i*tc.n+j] = float32(s)
				}
			}
			w.lowGemm(k, out, x, tc.rows, tc.beta)
			if e := relDiff(out, want); e > tc.tol {
				t.Errorf("rows=%d k=%d n=%d beta=%g bf16=%v: relative difference %.2g from the dequantized product, more than %g", tc.rows, tc.k, tc.n, tc.beta, tc.bf16, e, tc.tol)
			}
		}
	})
}
