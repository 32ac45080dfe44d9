package gpt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// refForward is the whole model in float64, written from the math: the
// oracle of the gradient check. p is laid out as cfg.Tensors.
func refForward(cfg Config, p []float64, tokens, targets []int32, b, t int) float64 {
	C, V, H := cfg.Width, cfg.Vocab, cfg.heads()
	D := C / H
	n := b * t
	ts := map[string][]float64{}
	for _, tt := range cfg.Tensors() {
		ts[tt.Name] = p[tt.Offset : tt.Offset+tt.Size()]
	}
	lin := func(x, w, bias []float64, in, o int) []float64 {
		out := make([]float64, n*o)
		for i := 0; i < n; i++ {
			for j := 0; j < o; j++ {
				s := bias[j]
				for k := 0; k < in; k++ {
					s += x[i*in+k] * w[k*o+j]
				}
				out[i*o+j] = s
			}
		}
		return out
	}
	x := make([]float64, n*C)
	for i := 0; i < n; i++ {
		for j := 0; j < C; j++ {
			x[i*C+j] = ts["wte"][int(tokens[i])*C+j] + ts["wpe"][(i%t)*C+j]
		}
	}
	for l := 0; l < cfg.Layers; l++ {
		pre := "h." + string(rune('0'+l)) + "."
		h1 := layerNorm64(x, ts[pre+"ln1.w"], ts[pre+"ln1.b"], n, C)
		qkv := lin(h1, ts[pre+"attn.w_qkv"], ts[pre+"attn.b_qkv"], C, 3*C)
		y := make([]float64, n*C)
		for bb := 0; bb < b; bb++ {
			for hh := 0; hh < H; hh++ {
				for i := 0; i < t; i++ {
					s := make([]float64, i+1)
					mx := math.Inf(-1)
					for j := 0; j <= i; j++ {
						for e := 0; e < D; e++ {
							s[j] += qkv[(bb*t+i)*3*C+hh*D+e] * qkv[(bb*t+j)*3*C+C+hh*D+e]
						}
						s[j] /= math.Sqrt(float64(D))
						mx = math.Max(mx, s[j])
					}
					var sum float64
					for j := range s {
						s[j] = math.Exp(s[j] - mx)
						sum += s[j]
					}
					for j := range s {
						for e := 0; e < D; e++ {
							y[(bb*t+i)*C+hh*D+e] += s[j] / sum * qkv[(bb*t+j)*3*C+2*C+hh*D+e]
						}
					}
				}
			}
		}
		att := lin(y, ts[pre+"attn.w_proj"], ts[pre+"attn.b_proj"], C, C)
		for i := range x {
			x[i] += att[i]
		}
		h2 := layerNorm64(x, ts[pre+"ln2.w"], ts[pre+"ln2.b"], n, C)
		f := lin(h2, ts[pre+"mlp.w_fc"], ts[pre+"mlp.b_fc"], C, 4*C)
		for i := range f {
			f[i] = gelu64(f[i])
		}
		o := lin(f, ts[pre+"mlp.w_out"], ts[pre+"mlp.b_out"], 4*C, C)
		for i := range x {
			x[i] += o[i]
		}
	}
	hf := layerNorm64(x, ts["ln_f.w"], ts["ln_f.b"], n, C)
	var logits []float64
	if cfg.TieEmbeddings {
		logits = make([]float64, n*V) // hf·wteᵀ
		for i := 0; i < n; i++ {
			for v := 0; v < V; v++ {
				for j := 0; j < C; j++ {
					logits[i*V+v] += hf[i*C+j] * ts["wte"][v*C+j]
				}
			}
		}
	} else {
		logits = lin(hf, ts["w_lm"], ts["b_lm"], C, V)
	}
	var loss float64
	for i := 0; i < n; i++ {
		row := logits[i*V : (i+1)*V]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		loss += mx + math.Log(s) - row[targets[i]]
	}
	return loss / float64(n)
}

func randTokens(r *rng.RNG, n, v int) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = int32(r.Intn(v))
	}
	return t
}

// TestModelGradient checks the loss and every gradient of the model, on
// each implementation, against the float64 reference and its central
// differences (computed once per config: they do not depend on the
// implementation), with and without tied embeddings (where wte's gradient
// sums the embedding's and the LM head's).
func TestModelGradient(t *testing.T) {
	type gradCase struct {
		cfg     Config
		params  []float32
		tok, tg []int32
		want    float64   // reference loss
		num     []float64 // reference gradient
		b, t    int
	}
	var cases []gradCase
	for _, cfg := range []Config{
		{Vocab: 5, BlockSize: 4, Layers: 2, Heads: 1, Width: 4},
		{Vocab: 7, BlockSize: 5, Layers: 2, Heads: 2, Width: 8},
		{Vocab: 7, BlockSize: 5, Layers: 2, Heads: 2, Width: 8, TieEmbeddings: true},
		{Vocab: 5, BlockSize: 4, Layers: 1, Heads: 1, Width: 4, TieEmbeddings: true},
	} {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Larger than the default initialisation, so every path carries a
		// gradient well above float32 rounding.
		r := rng.New(2)
		for i := range m.Params {
			m.Params[i] += float32(r.Normal() * 0.3)
		}
		c := gradCase{cfg: cfg, params: m.Params, b: 2, t: cfg.BlockSize}
		c.tok, c.tg = randTokens(r, c.b*c.t, cfg.Vocab), randTokens(r, c.b*c.t, cfg.Vocab)
		p64 := to64(m.Params)
		ref := func() float64 { return refForward(cfg, p64, c.tok, c.tg, c.b, c.t) }
		c.want, c.num = ref(), numGrad(ref, p64)
		cases = append(cases, c)
	}
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		for _, c := range cases {
			m, err := New(c.cfg, 1, WithImpl(k))
			if err != nil {
				t.Fatal(err)
			}
			copy(m.Params, c.params)
			loss := m.Forward(c.tok, c.tg, c.b, c.t)
			m.Backward()
			if math.Abs(loss-c.want) > 1e-5*c.want {
				t.Fatalf("%+v: loss %g, float64 reference %g", c.cfg, loss, c.want)
			}
			for _, ts := range c.cfg.Tensors() {
				closeGrad(t, ts.Name, m.Grads[ts.Offset:ts.Offset+ts.Size()], c.num[ts.Offset:ts.Offset+ts.Size()], 2e-3)
			}
		}
	})
}

func TestModelShapeErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Vocab: 0, BlockSize: 4, Layers: 1, Width: 4}, "Vocab = 0"},
		{Config{Vocab: 5, BlockSize: 4, Layers: 1, Heads: 3, Width: 8}, "not a multiple of Heads = 3"},
		{Config{Vocab: 5, BlockSize: 0, Layers: 1, Width: 8}, "BlockSize = 0"},
	} {
		if _, err := New(c.cfg, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
	}
	m, _ := New(Config{Vocab: 5, BlockSize: 4, Layers: 1, Width: 4}, 1)
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"t > block", func() { m.Forward(make([]int32, 5), nil, 1, 5) }, "BlockSize=4"},
		{"token", func() { m.Forward([]int32{0, 1, 9, 2}, nil, 1, 4) }, "token 9 at 2"},
		{"len", func() { m.Forward(make([]int32, 3), nil, 1, 4) }, "len(tokens)=3"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("%s: panic %v, want one containing %q", c.name, r, c.want)
				}
			}()
			c.f()
		}()
	}
}

// trainLosses runs steps AdamW steps on one random batch and returns the
// losses.
func trainLosses(k *kernels.Impl, cfg Config, steps int) []float64 {
	m, err := New(cfg, 7, WithImpl(k))
	if err != nil {
		panic(err)
	}
	opt := NewAdamW(len(m.Params), cfg.DecaySpans())
	r := rng.New(8)
	const b = 4
	var out []float64
	tok, tg := randTokens(r, b*cfg.BlockSize, cfg.Vocab), randTokens(r, b*cfg.BlockSize, cfg.Vocab)
	for s := 0; s < steps; s++ {
		out = append(out, m.Forward(tok, tg, b, cfg.BlockSize))
		m.Backward()
		opt.Update(m.Params, m.Grads, 1e-3)
	}
	return out
}

func TestDeterminism(t *testing.T) {
	kernelstest.ForEach(t, testDeterminism)
}

func testDeterminism(t *testing.T, k *kernels.Impl) {
	// Large enough that every element-wise pass splits over goroutines.
	cfg := Config{Vocab: 65, BlockSize: 64, Layers: 2, Heads: 4, Width: 128}
	steps := 4
	switch {
	case testing.Short(): // CI runs -short under qemu, where this is slow
		cfg.BlockSize, cfg.Width, cfg.Layers, steps = 32, 64, 1, 3
	case k.Name() == "generic": // the reference GEMM is slow
		cfg.Layers, steps = 1, 3
	}
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	a, b := trainLosses(k, cfg, steps), trainLosses(k, cfg, steps)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("step %d: losses %v and %v differ between identical runs", i, a[i], b[i])
		}
	}
	if a[steps-1] >= a[0] {
		t.Fatalf("loss did not fall on a batch it can memorise: %v", a)
	}
}

// TestReplicas checks the data-parallel split: the loss and gradients with
// the batch spread over 3 replicas (uneven: 2, 1 and 1 sequences) equal
// those of one replica up to float32 rounding.
func TestReplicas(t *testing.T) {
	kernelstest.ForEach(t, testReplicas)
}

func testReplicas(t *testing.T, k *kernels.Impl) {
	cfg := Config{Vocab: 11, BlockSize: 8, Layers: 2, Heads: 2, Width: 16}
	r := rng.New(9)
	tok, tg := randTokens(r, 4*8, cfg.Vocab), randTokens(r, 4*8, cfg.Vocab)
	run := func(procs int) (float64, []float32, int) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		m, _ := New(cfg, 3, WithImpl(k))
		loss := m.Forward(tok, tg, 4, 8)
		m.Backward()
		return loss, m.Grads, m.used
	}
	l1, g1, u1 := run(1)
	l3, g3, u3 := run(3)
	if u1 != 1 || u3 != 3 {
		t.Fatalf("replicas used: %d and %d, want 1 and 3", u1, u3)
	}
	if math.Abs(l1-l3) > 1e-6*l1 {
		t.Fatalf("loss %v with one replica, %v with three", l1, l3)
	}
	var scale float64
	for _, g := range g1 {
		scale = math.Max(scale, math.Abs(float64(g)))
	}
	for i := range g1 {
		if math.Abs(float64(g1[i]-g3[i])) > 1e-5*scale {
			t.Fatalf("gradient %d: %g with one replica, %g with three", i, g1[i], g3[i])
		}
	}
}

// TestBackwardOverwritesGrads checks that Backward overwrites the
// gradients, those it writes whole and those it accumulates into alike:
// with every replica's gradients poisoned (NaN) before it, they must be
// bitwise those of a fresh model, on one and on three replicas, with and
// without tied embeddings.
func TestBackwardOverwritesGrads(t *testing.T) {
	kernelstest.ForEach(t, testBackwardOverwritesGrads)
}

func testBackwardOverwritesGrads(t *testing.T, k *kernels.Impl) {
	for _, c := range []struct {
		procs int
		tie   bool
	}{{1, false}, {1, true}, {3, false}, {3, true}} {
		cfg := Config{Vocab: 11, BlockSize: 8, Layers: 2, Heads: 2, Width: 16, TieEmbeddings: c.tie}
		r := rng.New(9)
		tok, tg := randTokens(r, 4*8, cfg.Vocab), randTokens(r, 4*8, cfg.Vocab)
		old := runtime.GOMAXPROCS(c.procs)
		fresh, _ := New(cfg, 3, WithImpl(k))
		fresh.Forward(tok, tg, 4, 8)
		fresh.Backward()
		m, _ := New(cfg, 3, WithImpl(k))
		m.Forward(tok, tg, 4, 8)
		for _, rep := range m.reps {
			for i := range rep.grads {
				rep.grads[i] = float32(math.NaN())
			}
		}
		m.Backward()
		runtime.GOMAXPROCS(old)
		for i := range fresh.Grads {
			if math.Float32bits(m.Grads[i]) != math.Float32bits(fresh.Grads[i]) {
				t.Fatalf("%+v on %d replicas: gradient %d = %v after poisoning, %v fresh", cfg, c.procs, i, m.Grads[i], fresh.Grads[i])
			}
		}
	}
}

// TestTensorLayout pins the parameter layout checkpoints depend on: names,
// shapes and offsets, in order.
func TestTensorLayout(t *testing.T) {
	cfg := Config{Vocab: 5, BlockSize: 3, Layers: 2, Width: 4}
	want := []Tensor{
		{"wte", []int{5, 4}, 0},
		{"wpe", []int{3, 4}, 20},
		{"h.0.ln1.w", []int{4}, 32},
		{"h.0.ln1.b", []int{4}, 36},
		{"h.0.attn.w_qkv", []int{4, 12}, 40},
		{"h.0.attn.b_qkv", []int{12}, 88},
		{"h.0.attn.w_proj", []int{4, 4}, 100},
		{"h.0.attn.b_proj", []int{4}, 116},
		{"h.0.ln2.w", []int{4}, 120},
		{"h.0.ln2.b", []int{4}, 124},
		{"h.0.mlp.w_fc", []int{4, 16}, 128},
		{"h.0.mlp.b_fc", []int{16}, 192},
		{"h.0.mlp.w_out", []int{16, 4}, 208},
		{"h.0.mlp.b_out", []int{4}, 272},
		{"h.1.ln1.w", []int{4}, 276},
		{"h.1.ln1.b", []int{4}, 280},
		{"h.1.attn.w_qkv", []int{4, 12}, 284},
		{"h.1.attn.b_qkv", []int{12}, 332},
		{"h.1.attn.w_proj", []int{4, 4}, 344},
		{"h.1.attn.b_proj", []int{4}, 360},
		{"h.1.ln2.w", []int{4}, 364},
		{"h.1.ln2.b", []int{4}, 368},
		{"h.1.mlp.w_fc", []int{4, 16}, 372},
		{"h.1.mlp.b_fc", []int{16}, 436},
		{"h.1.mlp.w_out", []int{16, 4}, 452},
		{"h.1.mlp.b_out", []int{4}, 516},
		{"ln_f.w", []int{4}, 520},
		{"ln_f.b", []int{4}, 524},
		{"w_lm", []int{4, 5}, 528},
		{"b_lm", []int{5}, 548},
	}
	got := cfg.Tensors()
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !slices.Equal(got[i].Shape, want[i].Shape) || got[i].Offset != want[i].Offset {
			t.Errorf("tensor %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := cfg.NumParams(); n != 553 {
		t.Errorf("NumParams = %d, want 553", n)
	}
	// Tied embeddings: the same without the head's own w_lm and b_lm.
	cfg.TieEmbeddings = true
	got, want = cfg.Tensors(), want[:len(want)-2]
	if len(got) != len(want) {
		t.Fatalf("tied: %d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !slices.Equal(got[i].Shape, want[i].Shape) || got[i].Offset != want[i].Offset {
			t.Errorf("tied: tensor %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := cfg.NumParams(); n != 528 {
		t.Errorf("tied: NumParams = %d, want 528", n)
	}
	if w := cfg.view(make([]float32, 528)); w.wlm != nil || w.blm != nil {
		t.Errorf("tied: the view has an LM head of its own")
	}
}

// TestViewsByName checks that every view of the flat vector is the tensor
// of its name (looked up in Tensors, not by position), with capacity equal
// to its length.
func TestViewsByName(t *testing.T) {
	cfg := Config{Vocab: 7, BlockSize: 5, Layers: 3, Heads: 2, Width: 8}
	buf := make([]float32, cfg.NumParams())
	w := cfg.view(buf)
	byName := map[string]Tensor{}
	for _, ts := range cfg.Tensors() {
		byName[ts.Name] = ts
	}
	views := map[string][]float32{
		"wte": w.wte, "wpe": w.wpe,
		"ln_f.w": w.lnfW, "ln_f.b": w.lnfB, "w_lm": w.wlm, "b_lm": w.blm,
	}
	for l, b := range w.blocks {
		p := "h." + strconv.Itoa(l) + "."
		for name, v := range map[string][]float32{
			"ln1.w": b.ln1W, "ln1.b": b.ln1B,
			"attn.w_qkv": b.wqkv, "attn.b_qkv": b.bqkv, "attn.w_proj": b.wproj, "attn.b_proj": b.bproj,
			"ln2.w": b.ln2W, "ln2.b": b.ln2B,
			"mlp.w_fc": b.wfc, "mlp.b_fc": b.bfc, "mlp.w_out": b.wout, "mlp.b_out": b.bout,
		} {
			views[p+name] = v
		}
	}
	if len(views) != len(byName) {
		t.Fatalf("%d views, %d tensors", len(views), len(byName))
	}
	for name, v := range views {
		ts, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("view %q has no tensor", name)
		case len(v) != ts.Size() || cap(v) != len(v):
			t.Errorf("%s: view of length %d and capacity %d, want %d", name, len(v), cap(v), ts.Size())
		case &v[0] != &buf[ts.Offset]:
			t.Errorf("%s: view does not start at offset %d", name, ts.Offset)
		}
	}
}

// TestNewInitialisation checks New's initialisation by tensor name:
// LayerNorm gains 1, biases 0, the projections into the residual stream
// with a standard deviation 1/√(2·Layers) of the other matrices' 0.02.
func TestNewInitialisation(t *testing.T) {
	cfg := Config{Vocab: 50, BlockSize: 32, Layers: 2, Heads: 2, Width: 32}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range cfg.Tensors() {
		v := m.Params[ts.Offset : ts.Offset+ts.Size()]
		var s2 float64
		for _, x := range v {
			s2 += float64(x) * float64(x)
		}
		std := math.Sqrt(s2 / float64(len(v)))
		var want float64
		switch {
		case strings.HasSuffix(ts.Name, "ln1.w") || strings.HasSuffix(ts.Name, "ln2.w") || ts.Name == "ln_f.w":
			want = 1
		case len(ts.Shape) == 1:
			want = 0
		case strings.HasSuffix(ts.Name, "w_proj") || strings.HasSuffix(ts.Name, "w_out"):
			want = 0.01 // 0.02/√4
		default:
			want = 0.02
		}
		if math.Abs(std-want) > 0.1*want {
			t.Errorf("%s: root mean square %.4g, want %.4g", ts.Name, std, want)
		}
	}
}

// TestWithImpl checks the model computes with the implementation it was
// given, and with kernels.Default() without one (or with nil).
func TestWithImpl(t *testing.T) {
	cfg := Config{Vocab: 5, BlockSize: 4, Layers: 1, Width: 4}
	for _, c := range []struct {
		opts []Option
		want *kernels.Impl
	}{
		{nil, kernels.Default()},
		{[]Option{WithImpl(nil)}, kernels.Default()},
	} {
		m, _ := New(cfg, 1, c.opts...)
		if m.Impl() != c.want {
			t.Errorf("New(%d options): Impl() = %v, want %v", len(c.opts), m.Impl(), c.want)
		}
	}
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		m, _ := New(cfg, 1, WithImpl(k))
		if m.Impl() != k {
			t.Fatalf("Impl() = %v, want %v", m.Impl(), k)
		}
	})
}

// TestSingleHeadMatchesOneHead checks, on each implementation, that the
// single-head path (Heads 1) and the multi-head path with one head agree
// in loss and gradients.
func TestSingleHeadMatchesOneHead(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) {
		cfg := Config{Vocab: 11, BlockSize: 8, Layers: 2, Heads: 1, Width: 16}
		r := rng.New(3)
		tok, tg := randTokens(r, cfg.BlockSize, cfg.Vocab), randTokens(r, cfg.BlockSize, cfg.Vocab)
		single, _ := New(cfg, 4, WithImpl(k))
		multi, _ := New(cfg, 4, WithImpl(k))
		for i := range single.Params {
			single.Params[i] += float32(r.Normal() * 0.2)
		}
		copy(multi.Params, single.Params)
		for l := range multi.reps[0].attn {
			a, err := attention.NewMultiHead(cfg.Width, 1, attention.WithImpl(k))
			if err != nil {
				t.Fatal(err)
			}
			multi.reps[0].attn[l] = a
		}
		// One sequence: one replica, whatever GOMAXPROCS.
		ls, lm := single.Forward(tok, tg, 1, cfg.BlockSize), multi.Forward(tok, tg, 1, cfg.BlockSize)
		if math.Abs(ls-lm) > 1e-6*ls {
			t.Fatalf("loss %v on the single-head path, %v with one of multi-head", ls, lm)
		}
		single.Backward()
		multi.Backward()
		var scale float64
		for _, g := range single.Grads {
			scale = math.Max(scale, math.Abs(float64(g)))
		}
		for i := range single.Grads {
			if math.Abs(float64(single.Grads[i]-multi.Grads[i])) > 1e-5*scale {
				t.Fatalf("gradient %d: %g single-head, %g multi-head", i, single.Grads[i], multi.Grads[i])
			}
		}
	})
}

// TestKernelsThroughImpl checks that package gpt calls no package-level
// kernels function but Default: every kernel runs on the model's
// implementation.
func TestKernelsThroughImpl(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "kernels" && sel.Sel.Name != "Default" {
					t.Errorf("%s: kernels.%s called directly; call it on the model's *kernels.Impl", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestTiedAllocations checks that tying the embeddings adds no allocation
// to a training pass: a Forward and Backward of a tied model allocate no
// more than those of the same untied model.
func TestTiedAllocations(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	allocs := func(tie bool) float64 {
		cfg := Config{Vocab: 11, BlockSize: 8, Layers: 2, Heads: 2, Width: 16, TieEmbeddings: tie}
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(2)
		tok, tg := randTokens(r, 2*8, cfg.Vocab), randTokens(r, 2*8, cfg.Vocab)
		return testing.AllocsPerRun(5, func() {
			m.Forward(tok, tg, 2, 8)
			m.Backward()
		})
	}
	untied, tied := allocs(false), allocs(true)
	if tied > untied {
		t.Fatalf("a tied training pass allocates %v times, an untied one %v", tied, untied)
	}
	t.Logf("allocations per pass: untied %v, tied %v", untied, tied)
}

// TestAnyThreadCount runs a forward and backward pass at every GOMAXPROCS a
// user may set, up to many times the batch (replicas, each splitting its
// own work over the pool), within a bounded time, and checks the loss
// against one thread. GOMAXPROCS 4 with a batch of 2 is among the cases:
// nested Runs there need every reserved helper slot served.
func TestAnyThreadCount(t *testing.T) {
	kernelstest.ForEach(t, testAnyThreadCount)
}

func testAnyThreadCount(t *testing.T, k *kernels.Impl) {
	cfg := Config{Vocab: 17, BlockSize: 32, Layers: 2, Heads: 2, Width: 32}
	r := rng.New(5)
	tok, tg := randTokens(r, 4*32, cfg.Vocab), randTokens(r, 4*32, cfg.Vocab)
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, b := range []int{1, 2, 4} {
		var want float64
		for _, procs := range []int{1, 2, 3, 4, 8, 32, 64} {
			runtime.GOMAXPROCS(procs)
			done := make(chan float64, 1)
			go func() {
				m, err := New(cfg, 3, WithImpl(k))
				if err != nil {
					panic(err)
				}
				loss := m.Forward(tok[:b*32], tg[:b*32], b, 32)
				m.Backward()
				done <- loss
			}()
			select {
			case loss := <-done:
				if procs == 1 {
					want = loss
				} else if math.Abs(loss-want) > 1e-5*want {
					t.Fatalf("batch %d GOMAXPROCS %d: loss %v, one thread %v", b, procs, loss, want)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("batch %d GOMAXPROCS %d: forward and backward did not finish in 60 s (deadlock)", b, procs)
			}
		}
	}
}
