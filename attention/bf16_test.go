package attention

import (
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

// bf16Tol is the relative error (relErr: the largest difference over the
// largest reference value) the per-head products in bfloat16 compute
// (SetBF16Compute) are held to against the float64 reference, for the
// output, the probabilities and the gradient: each operand's rounding
// to bfloat16 is at most 2⁻⁹ of it, the float32 sums add little more.
const bf16Tol = 1e-2

// TestBF16ComputeAgainstReference holds Layer.Forward and Backward,
// Decoder.Decode of a whole prompt and Fused.Forward with bfloat16
// per-head products to the float64 reference within bf16Tol, on every
// implementation and refCases' shapes; where a product has at least
// BF16MinRows rows the results must differ from float32's (the bfloat16
// products ran), and turning the setting off again gives float32's
// results bit for bit.
func TestBF16ComputeAgainstReference(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range refCases {
			s := tc.s
			l := newLayer(t, p, s.c, tc.h)
			pr := newProblem(s, 31)
			f32 := runFast(l, pr)
			if l.BF16Compute() {
				t.Fatal("a new layer computes in bfloat16; the default is float32")
			}
			l.SetBF16Compute(true)
			if !l.BF16Compute() {
				t.Fatal("BF16Compute() = false after SetBF16Compute(true)")
			}
			bf := runFast(l, pr)
			tr := refForward(s, float64(l.Scale()), to64(pr.qkv))
			_, dy := crossEntropy(s.b*s.t, s.c, tr.y, pr.targets)
			want := [][]float64{tr.y, tr.probs, refBackward(tr, dy)}
			for i, got := range bf.named() {
				if e := relErr(got.s, want[i]); e > bf16Tol {
					t.Errorf("B=%d T=%d C=%d H=%d: bf16 %s: relative error %.2g against the reference, more than %g", s.b, s.t, s.c, tc.h, got.name, e, bf16Tol)
				}
			}
			if s.t >= BF16MinRows && s.c/max(tc.h, 1) >= BF16MinRows && equalF32(bf.y, f32.y) {
				t.Errorf("B=%d T=%d C=%d H=%d: the bf16 output equals float32's bit for bit: no product ran in bfloat16", s.b, s.t, s.c, tc.h)
			}

			// Decoding the first sequence's prompt in one call, and the
			// fused forward, start from the layer's setting.
			y1 := make([]float32, s.t*s.c)
			d := l.NewDecoder(s.t)
			if !d.BF16Compute() {
				t.Fatal("a Decoder of a bf16 layer computes in float32")
			}
			d.Decode(y1, pr.qkv, s.t)
			if e := relErr(y1, tr.y[:s.t*s.c]); e > bf16Tol {
				t.Errorf("B=%d T=%d C=%d H=%d: bf16 Decode of the prompt: relative error %.2g against the reference, more than %g", s.b, s.t, s.c, tc.h, e, bf16Tol)
			}
			yf := make([]float32, s.b*s.t*s.c)
			l.NewFused().Forward(yf, pr.qkv, s.b, s.t)
			if e := relErr(yf, tr.y); e > bf16Tol {
				t.Errorf("B=%d T=%d C=%d H=%d: bf16 Fused.Forward: relative error %.2g against the reference, more than %g", s.b, s.t, s.c, tc.h, e, bf16Tol)
			}

			l.SetBF16Compute(false)
			equal(t, "float32 again after bfloat16", runFast(l, pr).named(), f32.named())
		}
	})
}

// TestBF16ComputeOneTokenUnchanged decodes a sequence one token at a
// time with bfloat16 compute on: every product has one row, fewer than
// BF16MinRows, so the outputs equal float32's bit for bit.
func TestBF16ComputeOneTokenUnchanged(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		const T, C, H = 90, 64, 4
		l := newLayer(t, p, C, H)
		pr := newProblem(refShape{1, T, C, H}, 32)
		run := func(bf bool) []float32 {
			d := l.NewDecoder(T)
			d.SetBF16Compute(bf)
			y := make([]float32, T*C)
			for pos := 0; pos < T; pos++ {
				d.Decode(y[pos*C:], pr.qkv[pos*3*C:], 1)
			}
			return y
		}
		equal(t, "one token at a time", []namedF32{{"y", run(true)}}, []namedF32{{"y", run(false)}})
	})
}

// equalF32 reports whether a and b are equal bit for bit.
func equalF32(a, b []float32) bool {
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
