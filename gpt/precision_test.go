package gpt

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

func TestPrecisionNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Precision
		err  bool
	}{
		{"f32", PrecisionF32, false},
		{"bf16", PrecisionBF16, false},
		{"fp32", 0, true},
		{"", 0, true},
		{"BF16", 0, true},
	} {
		p, err := ParsePrecision(tc.name)
		if (err != nil) != tc.err || (!tc.err && (p != tc.p || p.String() != tc.name)) {
			t.Errorf("ParsePrecision(%q) = %v, %v", tc.name, p, err)
		}
	}
	if _, err := Precision(7).MarshalText(); err == nil {
		t.Error("Precision(7).MarshalText: no error")
	}
	m, _ := New(Config{Vocab: 5, BlockSize: 4, Layers: 1, Heads: 1, Width: 8}, 1)
	if err := m.SetPrecision(Precision(2)); err == nil || m.Precision() != PrecisionF32 {
		t.Errorf("SetPrecision(2) = %v, precision %v", err, m.Precision())
	}
}

// stepBF16 runs one forward and backward pass of m on tokens in each
// precision and returns the losses and gradients.
func stepBoth(m *Model, tokens, targets []int32, b, t int) (loss [2]float64, grads [2][]float32) {
	for i, p := range []Precision{PrecisionF32, PrecisionBF16} {
		m.SetPrecision(p)
		loss[i] = m.Forward(tokens, targets, b, t)
		m.Backward()
		grads[i] = append([]float32(nil), m.Grads...)
	}
	m.SetPrecision(PrecisionF32)
	return loss, grads
}

// TestBF16StepAgainstF32 bounds a bf16 training step's loss and gradients
// against float32's, on every implementation, and checks that bf16 is in
// use (the gradients differ) wherever a product has bf16MinRows rows.
func TestBF16StepAgainstF32(t *testing.T) {
	kernelstest.ForEach(t, testBF16StepAgainstF32)
}

func testBF16StepAgainstF32(t *testing.T, k *kernels.Impl) {
	for _, tie := range []bool{false, true} {
		cfg := Config{Vocab: 67, BlockSize: 32, Layers: 2, Heads: 4, Width: 64, TieEmbeddings: tie}
		m, err := New(cfg, 11, WithImpl(k))
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(5)
		const b = 3
		toks := randTokens(r, b*cfg.BlockSize, cfg.Vocab)
		tgts := randTokens(r, b*cfg.BlockSize, cfg.Vocab)
		loss, grads := stepBoth(m, toks, tgts, b, cfg.BlockSize)
		rel := math.Abs(loss[1]-loss[0]) / loss[0]
		worst, name := 0.0, ""
		for _, ts := range cfg.Tensors() {
			off := ts.Offset
			g0, g1 := grads[0][off:off+ts.Size()], grads[1][off:off+ts.Size()]
			scale := 0.0
			for _, v := range g0 {
				scale = max(scale, math.Abs(float64(v)))
			}
			for i := range g0 {
				if d := math.Abs(float64(g1[i]-g0[i])) / max(scale, 1e-30); d > worst || math.IsNaN(d) {
					worst, name = d, ts.Name
				}
			}
		}
		t.Logf("tie=%v: loss %.7g (f32) %.7g (bf16), rel %.3g; max|Δg|/max|g| %.3g (%s)", tie, loss[0], loss[1], rel, worst, name)
		if rel > bf16LossTol {
			t.Errorf("tie=%v: bf16 loss %v, f32 %v: relative difference %.3g above %g", tie, loss[1], loss[0], rel, bf16LossTol)
		}
		if worst > bf16GradTol || math.IsNaN(worst) {
			t.Errorf("tie=%v: bf16 gradients differ from f32's by %.3g of the tensor's largest (%s), above %g", tie, worst, name, bf16GradTol)
		}
		if worst == 0 {
			t.Errorf("tie=%v: bf16 gradients equal f32's bit for bit: bf16 compute not in use", tie)
		}
	}
}

// TestBF16FewRowsUnchanged checks that products of fewer than bf16MinRows
// rows stay float32 under PrecisionBF16: a forward pass over so few rows
// gives float32's logits bit for bit.
func TestBF16FewRowsUnchanged(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		cfg := Config{Vocab: 29, BlockSize: 16, Layers: 2, Heads: 2, Width: 32}
		m, _ := New(cfg, 3, WithImpl(k))
		toks := randTokens(rng.New(2), bf16MinRows-1, cfg.Vocab)
		m.Forward(toks, nil, 1, len(toks))
		want := append([]float32(nil), m.Logits()...)
		m.SetPrecision(PrecisionBF16)
		m.Forward(toks, nil, 1, len(toks))
		for i, v := range m.Logits() {
			if v != want[i] {
				t.Fatalf("logit %d: %v under bf16, %v under f32, over %d rows", i, v, want[i], len(toks))
			}
		}
	})
}

// TestPrecisionCheckpoint checks that checkpoints record the precision,
// that float32's writes no key (its checkpoints are as before), and that
// a run saved in one precision resumes in the other.
func TestPrecisionCheckpoint(t *testing.T) {
	for _, p := range []Precision{PrecisionF32, PrecisionBF16} {
		t.Run(p.String(), func(t *testing.T) {
			m, d, cfg := smallRun(t, 2, false)
			cfg.Precision = p
			tr, err := NewTrainer(m, d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Precision() != p {
				t.Fatalf("NewTrainer left the model at %v", m.Precision())
			}
			tr.TrainStep()
			js, _ := json.Marshal(cfg)
			if has := strings.Contains(string(js), `"precision"`); has != (p != PrecisionF32) {
				t.Errorf("TrainConfig JSON %s", js)
			}
			path := filepath.Join(t.TempDir(), CheckpointFile)
			if err := tr.Save(path, d.Vocab); err != nil {
				t.Fatal(err)
			}
			ck, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if ck.Train.Precision != p {
				t.Errorf("loaded precision %v, saved %v", ck.Train.Precision, p)
			}
			other := PrecisionBF16 - p
			ck.Train.Precision = other
			tr2, err := ck.Resume(d)
			if err != nil {
				t.Fatal(err)
			}
			if tr2.Model.Precision() != other {
				t.Errorf("resumed in %v, model at %v", other, tr2.Model.Precision())
			}
			if l := tr2.TrainStep(); math.IsNaN(l) || l <= 0 {
				t.Errorf("resumed step in %v: loss %v", other, l)
			}
		})
	}
}

func ExampleModel_SetPrecision() {
	m, _ := New(Config{Vocab: 16, BlockSize: 32, Layers: 1, Heads: 2, Width: 32}, 1)
	toks := make([]int32, 32)
	for i := range toks {
		toks[i] = int32(i % 16)
	}
	f32 := m.Forward(toks, toks, 1, 32)
	m.SetPrecision(PrecisionBF16) // products of 16 rows or more in bfloat16
	bf := m.Forward(toks, toks, 1, 32)
	fmt.Printf("%v: loss within %.1f%% of f32's: %v\n", m.Precision(), 100*bf16LossTol, math.Abs(bf-f32) <= bf16LossTol*f32)
	// Output: bf16: loss within 0.1% of f32's: true
}

// TestBF16LowWeights checks that a model of bfloat16 weights computes its
// products of many rows in bf16 under PrecisionBF16 (GemmBF16ComputeWeights:
// the logits change) and stays within the loss bound of float32 products.
func TestBF16LowWeights(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		cfg := Config{Vocab: 29, BlockSize: 32, Layers: 2, Heads: 2, Width: 64}
		m, _ := New(cfg, 3, WithImpl(k))
		low, err := m.WithWeights(WeightsBF16)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(2)
		toks, tgts := randTokens(r, 64, cfg.Vocab), randTokens(r, 64, cfg.Vocab)
		want := low.Forward(toks, tgts, 2, 32)
		logits := append([]float32(nil), low.Logits()...)
		low.SetPrecision(PrecisionBF16)
		got := low.Forward(toks, tgts, 2, 32)
		same := 0
		for i, v := range low.Logits() {
			if v == logits[i] {
				same++
			}
		}
		if same == len(logits) {
			t.Error("bf16 compute left every logit of the bfloat16-weights model unchanged: not in use")
		}
		if rel := math.Abs(got-want) / want; rel > bf16LossTol {
			t.Errorf("loss %v in bf16, %v in float32: relative difference %.3g above %g", got, want, rel, bf16LossTol)
		}
	})
}
