package gpt

import (
	"math"
	"runtime"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// inferTol is the documented agreement of the inference forward's loss
// with Forward's, relative.
const inferTol = 2e-6

// TestInferLossMatchesForward holds the inference forward's mean loss to
// Forward's with targets, on every implementation and weight format, at
// GOMAXPROCS 1, 2 and 3 (the batch in one part or several):
// one head and several, tied and untied heads, one pass and several
// (sequences longer than a pass's rows allow together), t = 1 and row
// counts that are not a multiple of the head's block of rows.
func TestInferLossMatchesForward(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cases := []struct {
		cfg  Config
		b, t int
	}{
		{Config{Vocab: 37, BlockSize: 16, Layers: 2, Heads: 1, Width: 16}, 3, 16},
		{Config{Vocab: 50, BlockSize: 40, Layers: 2, Heads: 4, Width: 32, TieEmbeddings: true}, 5, 37},
		{Config{Vocab: 29, BlockSize: 8, Layers: 1, Heads: 2, Width: 8}, 4, 1},
		// 1024/300 = 3 sequences a pass: passes of 3 and 2.
		{Config{Vocab: 41, BlockSize: 300, Layers: 2, Heads: 2, Width: 16}, 5, 300},
	}
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for i, tc := range cases {
			m, err := New(tc.cfg, uint64(10+i), WithImpl(p))
			if err != nil {
				t.Fatal(err)
			}
			r := rng.New(uint64(20 + i))
			n := tc.b * tc.t
			tok, tg := randTokens(r, n, tc.cfg.Vocab), randTokens(r, n, tc.cfg.Vocab)
			for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
				mf, err := m.WithWeights(f)
				if err != nil {
					t.Fatal(err)
				}
				// One part and several, split evenly and not.
				for _, procs := range []int{1, 2, 3} {
					runtime.GOMAXPROCS(procs)
					want := mf.Forward(tok, tg, tc.b, tc.t)
					got := mf.inferLoss(tok, tg, tc.b, tc.t)
					if e := math.Abs(got-want) / math.Abs(want); !(e <= inferTol) {
						t.Errorf("case %d %v GOMAXPROCS=%d: inference loss %.9g, Forward's %.9g: relative difference %.2g above %g", i, f, procs, got, want, e, inferTol)
					}
				}
				// Each part's workspace holds one pass: at most 1024 rows
				// or one sequence, and headRows rows of logits.
				rows := max(tc.t, min(tc.b*tc.t, inferRows/tc.t*tc.t))
				for j, in := range mf.infs {
					if len(in.x) > rows*tc.cfg.Width || len(in.logits) > headRows*tc.cfg.Vocab {
						t.Errorf("case %d %v part %d: workspace of %d rows and %d logits, want at most %d rows and %d logits", i, f, j, len(in.x)/tc.cfg.Width, len(in.logits), rows, headRows*tc.cfg.Vocab)
					}
				}
			}
		}
	})
}

// TestInferDeterministic holds the inference forward's loss bit for bit
// the same at every GOMAXPROCS from 1 to 64, on every implementation,
// weight format and precision: its parts, the products' splits between
// goroutines (the float32 and bfloat16 drivers, int8 panels dequantized
// in parallel) and the attention's heads never change a sum's order.
func TestInferDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cases := []struct {
		cfg  Config
		b, T int
	}{
		{Config{Vocab: 50, BlockSize: 40, Layers: 2, Heads: 4, Width: 32, TieEmbeddings: true}, 5, 37},
		// Products large enough for the drivers to split them (2·m·n·k
		// over 2²⁶ for the MLP's matrices).
		{Config{Vocab: 300, BlockSize: 128, Layers: 1, Heads: 4, Width: 256}, 2, 128},
	}
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for i, tc := range cases {
			if i > 0 && (testing.Short() || p.Name() == "generic") {
				continue // the generic products run on one goroutine
			}
			testInferDeterministic(t, p, tc.cfg, tc.b, tc.T)
		}
	})
}

// testInferDeterministic is TestInferDeterministic for one model shape.
func testInferDeterministic(t *testing.T, p *kernels.Impl, cfg Config, b, T int) {
	m, err := New(cfg, 11, WithImpl(p))
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(21)
	tok, tg := randTokens(r, b*T, cfg.Vocab), randTokens(r, b*T, cfg.Vocab)
	for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
		for _, prec := range []Precision{PrecisionF32, PrecisionBF16} {
			mf, err := m.WithWeights(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := mf.SetPrecision(prec); err != nil {
				t.Fatal(err)
			}
			var first float64
			for i, procs := range []int{1, 2, 3, 8, 32, 64} {
				runtime.GOMAXPROCS(procs)
				got := mf.inferLoss(tok, tg, b, T)
				if i == 0 {
					first = got
				} else if math.Float64bits(got) != math.Float64bits(first) {
					t.Errorf("width %d, %v %v GOMAXPROCS=%d: inference loss %.17g, at GOMAXPROCS=1 %.17g", cfg.Width, f, prec, procs, got, first)
				}
			}
		}
	}
}

// TestEvalSequentialInference checks that EvalSequential is the mean of
// the inference forward's batch losses, within inferTol of Forward's,
// and that it keeps nothing of a training forward (no replica
// activations are grown).
func TestEvalSequentialInference(t *testing.T) {
	cfg := Config{Vocab: 31, BlockSize: 24, Layers: 2, Heads: 2, Width: 16}
	m, err := New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(6)
	const b, T, batches = 3, 24, 2
	toks := make([]uint16, batches*b*T+1)
	for i := range toks {
		toks[i] = uint16(r.Intn(cfg.Vocab))
	}
	got, err := m.EvalSequential(toks, b, T, batches)
	if err != nil {
		t.Fatal(err)
	}
	if m.reps[0].acts.n != 0 {
		t.Errorf("EvalSequential grew the training forward's activations (%d rows)", m.reps[0].acts.n)
	}
	var want float64
	x, y := make([]int32, b*T), make([]int32, b*T)
	for k := 0; k < batches; k++ {
		for i := range x {
			x[i], y[i] = int32(toks[k*b*T+i]), int32(toks[k*b*T+i+1])
		}
		want += m.Forward(x, y, b, T)
	}
	want /= batches
	if e := math.Abs(got-want) / want; !(e <= inferTol) {
		t.Errorf("EvalSequential = %.9g, mean of Forward's losses %.9g: relative difference %.2g", got, want, e)
	}
}
