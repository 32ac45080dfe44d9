package gpt

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/impltest"
	"github.com/simdgpt/simdgpt/kernels"
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
	logits := lin(hf, ts["w_lm"], ts["b_lm"], C, V)
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

func TestModelGradient(t *testing.T) {
	impltest.ForEach(t, testModelGradient)
}

func testModelGradient(t *testing.T, k *kernels.Impl) {
	for _, cfg := range []Config{
		{Vocab: 5, BlockSize: 4, Layers: 2, Heads: 1, Width: 4},
		{Vocab: 7, BlockSize: 5, Layers: 2, Heads: 2, Width: 8},
	} {
		m, err := New(cfg, 1, WithImpl(k))
		if err != nil {
			t.Fatal(err)
		}
		// Larger than the default initialisation, so every path carries a
		// gradient well above float32 rounding.
		r := rng.New(2)
		for i := range m.Params {
			m.Params[i] += float32(r.Normal() * 0.3)
		}
		const b = 2
		tt := cfg.BlockSize
		tok, tg := randTokens(r, b*tt, cfg.Vocab), randTokens(r, b*tt, cfg.Vocab)
		loss := m.Forward(tok, tg, b, tt)
		m.Backward()
		p64 := to64(m.Params)
		want := refForward(cfg, p64, tok, tg, b, tt)
		if math.Abs(loss-want) > 1e-5*want {
			t.Fatalf("%+v: loss %g, float64 reference %g", cfg, loss, want)
		}
		num := numGrad(func() float64 { return refForward(cfg, p64, tok, tg, b, tt) }, p64)
		for _, ts := range cfg.Tensors() {
			closeGrad(t, ts.Name, m.Grads[ts.Offset:ts.Offset+ts.Size()], num[ts.Offset:ts.Offset+ts.Size()], 2e-3)
		}
	}
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
	opt := NewAdamW(len(m.Params), cfg.DecayMask())
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
	impltest.ForEach(t, testDeterminism)
}

func testDeterminism(t *testing.T, k *kernels.Impl) {
	// Large enough that every element-wise pass splits over goroutines.
	cfg := Config{Vocab: 65, BlockSize: 64, Layers: 2, Heads: 4, Width: 128}
	steps := 4
	if testing.Short() || k.Name() == "generic" { // slow under qemu, and the reference GEMM is slow
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
	impltest.ForEach(t, testReplicas)
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
