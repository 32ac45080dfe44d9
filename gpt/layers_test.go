package gpt

import (
	"fmt"
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// Float64 references of each layer: their finite differences are exact
// enough to check the float32 backward passes.

func randVec(r *rng.RNG, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Normal() * scale)
	}
	return v
}

func to64(v []float32) []float64 {
	o := make([]float64, len(v))
	for i, x := range v {
		o[i] = float64(x)
	}
	return o
}

// numGrad returns the central-difference gradient of f with respect to
// every element of x (float64).
func numGrad(f func() float64, x []float64) []float64 {
	const h = 1e-6
	g := make([]float64, len(x))
	for i := range x {
		old := x[i]
		x[i] = old + h
		fp := f()
		x[i] = old - h
		fm := f()
		x[i] = old
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

// closeGrad fails unless every analytic gradient is within rtol of the
// numerical one, relative to the largest numerical magnitude (plus atol).
func closeGrad(t *testing.T, name string, got []float32, want []float64, rtol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d gradients, want %d", name, len(got), len(want))
	}
	var scale float64
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > rtol*scale+1e-7 {
			t.Fatalf("%s[%d] = %g, finite difference %g (|diff| %g > %g)", name, i, got[i], want[i], d, rtol*scale)
		}
	}
}

// dot64 is Σ out·r: the scalar loss whose gradient with respect to out is r.
func dot64(out []float64, r []float32) float64 {
	var s float64
	for i := range out {
		s += out[i] * float64(r[i])
	}
	return s
}

func layerNorm64(x, w, b []float64, n, c int) []float64 {
	out := make([]float64, n*c)
	for i := 0; i < n; i++ {
		var m, v float64
		for j := 0; j < c; j++ {
			m += x[i*c+j]
		}
		m /= float64(c)
		for j := 0; j < c; j++ {
			v += (x[i*c+j] - m) * (x[i*c+j] - m)
		}
		r := 1 / math.Sqrt(v/float64(c)+lnEps)
		for j := 0; j < c; j++ {
			out[i*c+j] = (x[i*c+j]-m)*r*w[j] + b[j]
		}
	}
	return out
}

func gelu64(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func TestLayerNormGrad(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, k *kernels.Impl) { layerNormGrad(t, k) })
}

func layerNormGrad(t *testing.T, k *kernels.Impl) {
	for _, sz := range []struct{ n, c int }{{1, 3}, {5, 8}, {40, 33}} {
		r := rng.New(1)
		n, c := sz.n, sz.c
		x, w, b := randVec(r, n*c, 2), randVec(r, c, 1), randVec(r, c, 1)
		dout := randVec(r, n*c, 1)
		out, mean, rstd := make([]float32, n*c), make([]float32, n), make([]float32, n)
		layerNormForward(k, out, mean, rstd, x, w, b, n, c)
		x64, w64, b64 := to64(x), to64(w), to64(b)
		ref := layerNorm64(x64, w64, b64, n, c)
		closeGrad(t, "layernorm out", out, ref, 1e-5)
		dx := randVec(r, n*c, 1) // accumulated into: start from a known value
		dx0 := append([]float32(nil), dx...)
		dw, db := make([]float32, c), make([]float32, c)
		layerNormBackward(k, dx, dw, db, dout, x, mean, rstd, w, n, c)
		for i := range dx {
			dx[i] -= dx0[i]
		}
		f := func() float64 { return dot64(layerNorm64(x64, w64, b64, n, c), dout) }
		closeGrad(t, "layernorm dx", dx, numGrad(f, x64), 1e-4)
		closeGrad(t, "layernorm dw", dw, numGrad(f, w64), 1e-4)
		closeGrad(t, "layernorm db", db, numGrad(f, b64), 1e-4)
	}
}

func TestGeluGrad(t *testing.T) {
	kernelstest.ForEach(t, testGeluGrad)
}

func testGeluGrad(t *testing.T, k *kernels.Impl) {
	r := rng.New(2)
	n := 5000
	x := randVec(r, n, 3)
	x[0], x[1], x[2], x[3], x[4] = 0, 12, -12, 60, -60
	out, dx := make([]float32, n), make([]float32, n)
	k.GELU(out, x)
	dout := randVec(r, n, 1)
	geluBackward(k, dx, dout, x, n)
	for i := range x {
		xv := float64(x[i])
		if d := math.Abs(float64(out[i]) - gelu64(xv)); d > 2e-6*math.Max(1, math.Abs(xv)) {
			t.Fatalf("gelu(%g) = %g, want %g", xv, out[i], gelu64(xv))
		}
		const h = 1e-6
		num := float64(dout[i]) * (gelu64(xv+h) - gelu64(xv-h)) / (2 * h)
		if d := math.Abs(float64(dx[i]) - num); d > 1e-5*math.Max(1, math.Abs(num)) {
			t.Fatalf("gelu' at %g: %g, finite difference %g", xv, dx[i], num)
		}
	}
}

func TestLinearGrad(t *testing.T) {
	kernelstest.ForEach(t, testLinearGrad)
}

func testLinearGrad(t *testing.T, k *kernels.Impl) {
	for _, sz := range []struct{ n, in, o int }{{1, 1, 1}, {7, 5, 3}, {33, 16, 20}} {
		r := rng.New(3)
		n, in, o := sz.n, sz.in, sz.o
		x, w, b := randVec(r, n*in, 1), randVec(r, in*o, 1), randVec(r, o, 1)
		out := make([]float32, n*o)
		linearForward(k, false, out, x, w, b, n, in, o)
		x64, w64, b64 := to64(x), to64(w), to64(b)
		ref := func() []float64 {
			out := make([]float64, n*o)
			for i := 0; i < n; i++ {
				for j := 0; j < o; j++ {
					s := b64[j]
					for k := 0; k < in; k++ {
						s += x64[i*in+k] * w64[k*o+j]
					}
					out[i*o+j] = s
				}
			}
			return out
		}
		closeGrad(t, "linear out", out, ref(), 1e-5)
		dout := randVec(r, n*o, 1)
		dx := randVec(r, n*in, 1)                         // overwritten
		dw, db := randVec(r, in*o, 1), make([]float32, o) // dw overwritten, db accumulated
		linearBackward(k, false, dx, dw, db, dout, x, w, n, in, o)
		f := func() float64 { return dot64(ref(), dout) }
		closeGrad(t, "linear dx", dx, numGrad(f, x64), 1e-5)
		closeGrad(t, "linear dw", dw, numGrad(f, w64), 1e-5)
		closeGrad(t, "linear db", db, numGrad(f, b64), 1e-5)
	}
}

func TestEmbedGrad(t *testing.T) {
	kernelstest.ForEach(t, testEmbedGrad)
}

func testEmbedGrad(t *testing.T, k *kernels.Impl) {
	// pos 0 is training's case (b sequences of tt tokens); pos 3 with one
	// sequence is the decoder's (tokens after the 3 in its cache).
	for _, cs := range []struct{ b, tt, pos int }{{3, 5, 0}, {1, 5, 3}, {1, 1, 7}} {
		r := rng.New(4)
		const v, c, maxT = 7, 4, 8
		b, tt, pos := cs.b, cs.tt, cs.pos
		n := b * tt
		wte, wpe := randVec(r, v*c, 1), randVec(r, maxT*c, 1)
		tok := make([]int32, n)
		for i := range tok {
			tok[i] = int32(r.Intn(v))
		}
		x := make([]float32, n*c)
		embedForward(k, x, wte, wpe, tok, n, tt, pos, c)
		te64, pe64 := to64(wte), to64(wpe)
		ref := func() []float64 {
			out := make([]float64, n*c)
			for i := 0; i < n; i++ {
				for j := 0; j < c; j++ {
					out[i*c+j] = te64[int(tok[i])*c+j] + pe64[(pos+i%tt)*c+j]
				}
			}
			return out
		}
		closeGrad(t, fmt.Sprintf("%+v: embed out", cs), x, ref(), 1e-6)
		if pos != 0 {
			continue // embedBackward is training's, from position 0
		}
		dx := randVec(r, n*c, 1)
		dwte, dwpe := make([]float32, v*c), make([]float32, maxT*c)
		embedBackward(k, dwte, dwpe, dx, tok, n, tt, c)
		f := func() float64 { return dot64(ref(), dx) }
		closeGrad(t, "dwte", dwte, numGrad(f, te64), 1e-5)
		closeGrad(t, "dwpe", dwpe, numGrad(f, pe64), 1e-5)
	}
}

func TestCrossEntropyGrad(t *testing.T) {
	kernelstest.ForEach(t, testCrossEntropyGrad)
}

func testCrossEntropyGrad(t *testing.T, k *kernels.Impl) {
	r := rng.New(5)
	const n, v = 9, 11
	logits := randVec(r, n*v, 3)
	tg := make([]int32, n)
	for i := range tg {
		tg[i] = int32(r.Intn(v))
	}
	l64 := to64(logits)
	ref := func() float64 {
		var loss float64
		for i := 0; i < n; i++ {
			row := l64[i*v : (i+1)*v]
			m := row[0]
			for _, x := range row {
				m = math.Max(m, x)
			}
			var s float64
			for _, x := range row {
				s += math.Exp(x - m)
			}
			loss += m + math.Log(s) - row[tg[i]]
		}
		return loss / n
	}
	d := append([]float32(nil), logits...)
	loss := crossEntropy(k, d, make([]float32, n), tg, n, v, 1/float32(n)) / n
	if want := ref(); math.Abs(loss-want) > 1e-5*want {
		t.Fatalf("loss %g, want %g", loss, want)
	}
	closeGrad(t, "dlogits", d, numGrad(ref, l64), 1e-4)
}

func TestAdamW(t *testing.T) {
	// One parameter against the formulas computed in float64, with clipping
	// and weight decay on the first parameter only.
	p := []float32{1, -2}
	g := []float32{3, 4} // norm 5, clipped to 1
	o := NewAdamW(2, []Span{{0, 1}})
	var m, v [2]float64
	p64 := []float64{1, -2}
	const lr = 0.01
	for step := 1; step <= 3; step++ {
		norm := o.Update(p, g, lr)
		if math.Abs(norm-5) > 1e-6 {
			t.Fatalf("step %d: grad norm %g, want 5", step, norm)
		}
		for i := range p64 {
			gc := float64(g[i]) / 5
			m[i] = 0.9*m[i] + 0.1*gc
			v[i] = 0.95*v[i] + 0.05*gc*gc
			mh := m[i] / (1 - math.Pow(0.9, float64(step)))
			vh := v[i] / (1 - math.Pow(0.95, float64(step)))
			upd := mh / (math.Sqrt(vh) + 1e-8)
			if i == 0 {
				upd += 0.1 * p64[i]
			}
			p64[i] -= lr * upd
			if math.Abs(float64(p[i])-p64[i]) > 1e-6 {
				t.Fatalf("step %d param %d = %g, want %g", step, i, p[i], p64[i])
			}
		}
	}
	if o.Step != 3 {
		t.Fatalf("Step = %d, want 3", o.Step)
	}
}

func TestLRSchedule(t *testing.T) {
	s := LRSchedule{Max: 1, Min: 0.1, Warmup: 10, Total: 110}
	for _, c := range []struct {
		step int
		want float32
	}{{0, 0.1}, {4, 0.5}, {9, 1}, {10, 1}, {60, 0.55}, {110, 0.1}, {500, 0.1}} {
		if got := s.At(c.step); math.Abs(float64(got-c.want)) > 1e-6 {
			t.Errorf("At(%d) = %g, want %g", c.step, got, c.want)
		}
	}
}
