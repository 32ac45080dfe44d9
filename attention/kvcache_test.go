package attention

import (
	"fmt"
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// kvBF16Tol is the agreement, relative to the largest |output|, of a
// bf16-cache Decoder with a float32-cache Decoder fed the same keys and
// values rounded to bfloat16: the same products summed in float32 in
// another order, and on CPUs where GemmBF16 multiplies one row as two
// bfloat16 vectors, its added 2⁻¹⁶ of each product (see kernels'
// low-bit products).
const kvBF16Tol = 5e-5

// kvBF16Err64 is the bf16 cache's error against float64 attention on the
// unrounded inputs of newProblem (scores of order 1), relative to the
// largest |output|: each key and value rounded to bfloat16 (2⁻⁹).
const kvBF16Err64 = 1e-2

// roundKV returns qkv with its keys and values (not its queries)
// rounded to bfloat16.
func roundKV(qkv []float32, c int) []float32 {
	out := append([]float32(nil), qkv...)
	for i := range out {
		if i%(3*c) >= c {
			out[i] = lowbit.FromBF16(lowbit.ToBF16(out[i]))
		}
	}
	return out
}

// decodeAll decodes t positions of qkv with d from empty, the first call
// prompt positions and then one per call, into a new y.
func decodeAll(d *Decoder, qkv []float32, t, c, prompt int) []float32 {
	y := make([]float32, t*c)
	d.Reset()
	for pos := 0; pos < t; {
		n := 1
		if pos == 0 {
			n = prompt
		}
		d.Decode(y[pos*c:], qkv[pos*3*c:], n)
		pos += n
	}
	return y
}

// TestDecodeBF16Cache checks the bf16 cache on every implementation,
// over lengths that end inside and on blocks of 32 positions, head sizes
// that pad their groups, prompts that read the cache in place (up to 8
// rows) and that widen it: against a float32 cache fed the rounded keys
// and values (within kvBF16Tol), and against float64 attention on the
// unrounded inputs (within kvBF16Err64). Each decoder first decodes a
// sequence whose values round to infinity, then is Reset: a cleared
// block must hide the old values from the zero-padded probabilities.
func TestDecodeBF16Cache(t *testing.T) {
	kernelstest.ForEach(t, func(t *testing.T, p *kernels.Impl) {
		for _, tc := range []struct {
			t, c, h int
			prompt  int
		}{
			{1, 8, 0, 1},
			{5, 8, 0, 5},
			{33, 32, 4, 1},
			{32, 48, 6, 8},
			{70, 32, 4, 3},
			{70, 32, 4, 9},
			{130, 64, 1, 129},
			{200, 48, 6, 1},
			{160, 256, 4, 150}, // D = 64, the prompt's heads in parallel
			{97, 200, 2, 40},   // D = 100: four groups, the last padded
		} {
			name := fmt.Sprintf("T=%d C=%d H=%d prompt=%d", tc.t, tc.c, tc.h, tc.prompt)
			s := refShape{1, tc.t, tc.c, max(tc.h, 1)}
			l := newLayer(t, p, tc.c, tc.h)
			pr := newProblem(s, 21)
			d := l.NewDecoderKV(tc.t, KVBF16)
			if d.KVCache() != KVBF16 || d.Cap() != tc.t {
				t.Fatalf("%s: KVCache() = %v, Cap() = %d", name, d.KVCache(), d.Cap())
			}
			huge := append([]float32(nil), pr.qkv...)
			for i := range huge {
				if i%(3*tc.c) >= 2*tc.c {
					huge[i] = math.MaxFloat32
				}
			}
			decodeAll(d, huge, tc.t, tc.c, 1)
			got := decodeAll(d, pr.qkv, tc.t, tc.c, tc.prompt)
			want := decodeAll(l.NewDecoder(tc.t), roundKV(pr.qkv, tc.c), tc.t, tc.c, tc.prompt)
			if e := relErr(got, to64(want)); !(e <= kvBF16Tol) {
				t.Errorf("%s: bf16 cache against a float32 cache of the rounded keys and values: %.2g (relative), more than %g", name, e, kvBF16Tol)
			}
			ref := refForward(s, 1/math.Sqrt(float64(s.d())), to64(pr.qkv))
			if e := relErr(got, ref.y); !(e <= kvBF16Err64) {
				t.Errorf("%s: bf16 cache against float64: %.2g (relative), more than %g", name, e, kvBF16Err64)
			}
		}
	})
}

func TestKVCacheNames(t *testing.T) {
	for _, f := range []KVCache{KVFloat32, KVBF16} {
		g, err := ParseKVCache(f.String())
		if err != nil || g != f {
			t.Errorf("ParseKVCache(%q) = %v, %v; want %v", f.String(), g, err, f)
		}
	}
	if _, err := ParseKVCache("fp16"); err == nil || err.Error() != `key/value cache "fp16": want f32 or bf16` {
		t.Errorf("ParseKVCache(fp16): error %v", err)
	}
	if s := KVCache(7).String(); s != "KVCache(7)" {
		t.Errorf("KVCache(7).String() = %q", s)
	}
	l := newLayer(t, nil, 8, 2)
	mustPanic(t, func() { l.NewDecoderKV(4, KVCache(7)) }, "attention.Layer.NewDecoderKV: kv = KVCache(7), want KVFloat32 or KVBF16")
	mustPanic(t, func() { l.NewDecoderKV(0, KVBF16) }, "attention.Layer.NewDecoderKV: maxT = 0, must be >= 1")
	mustPanic(t, func() { l.NewDecoderKV(math.MaxInt/64, KVBF16) }, "attention.Layer.NewDecoderKV: maxT = ", "(the cache's size must be an int)")
}

// TestCacheBytes checks CacheBytes against the storage a decoder holds.
func TestCacheBytes(t *testing.T) {
	for _, tc := range []struct {
		f          KVCache
		maxT, c, h int
		want       int64
	}{
		{KVFloat32, 1024, 768, 12, 8 * 1024 * 768},
		{KVBF16, 1024, 768, 12, 4 * 1024 * 768},
		{KVBF16, 33, 8, 2, 2 * (2*33*32 + 2*64*4)},
		{KVBF16, 97, 200, 2, 2 * (2*97*128 + 2*128*100)},
	} {
		if got := CacheBytes(tc.f, tc.maxT, tc.c, tc.h); got != tc.want {
			t.Errorf("CacheBytes(%v, %d, %d, %d) = %d, want %d", tc.f, tc.maxT, tc.c, tc.h, got, tc.want)
		}
		d := newLayer(t, nil, tc.c, tc.h).NewDecoderKV(tc.maxT, tc.f)
		held := 4 * int64(len(d.k)+len(d.v))
		if d.bf16 != nil {
			held = 2 * int64(len(d.bf16.kb)+len(d.bf16.vb))
		}
		if held != tc.want {
			t.Errorf("%v maxT=%d C=%d H=%d: the decoder holds %d bytes, CacheBytes says %d", tc.f, tc.maxT, tc.c, tc.h, held, tc.want)
		}
	}
}
