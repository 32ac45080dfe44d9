//go:build amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x || wasm

// The sizes below overflow a 32-bit int.

package kernels

import (
	"math"
	"strings"
	"testing"
)

// TestHugeStridesPanic calls every kernel with strides and sizes whose
// span (rows-1)*ld + cols overflows int, on every implementation: each
// call must panic in Go with a message naming the argument, never reach
// the assembly (which once wrote past c with ldc = 2^62+25).
func TestHugeStridesPanic(t *testing.T) {
	const huge = 1<<62 + 25
	big := math.MaxInt
	forEachImpl(t, func(t *testing.T, p *Impl) {
		a, b, c := make([]float32, 64), make([]float32, 64), make([]float32, 64)
		cases := []struct {
			name string
			call func()
			want string
		}{
			{"gemm ldc 2^62+25", func() { p.Gemm(false, false, 5, 3, 2, 1, a, 2, b, 3, 0, c, huge) }, "Gemm: len(c) = 64"},
			{"gemm ldc 2^62+25 m 4", func() { p.Gemm(false, false, 4, 3, 2, 1, a, 2, b, 3, 1, c, huge) }, "Gemm: len(c) = 64"},
			{"gemm lda maxint", func() { p.Gemm(false, false, 2, 3, 2, 1, a, big, b, 3, 0, c, 3) }, "Gemm: len(a) = 64"},
			{"gemm ldb huge transposed", func() { p.Gemm(false, true, 2, 3, 2, 1, a, 2, b, huge, 0, c, 3) }, "Gemm: len(b) = 64"},
			{"gemm lda huge transposed", func() { p.Gemm(true, false, 2, 3, 3, 1, a, huge, b, 3, 0, c, 3) }, "Gemm: len(a) = 64"},
			{"gemm m huge", func() { p.Gemm(false, false, huge, 1, 1, 1, a, 1, b, 1, 0, c, 1) }, "Gemm: len(a) = 64"},
			{"matmul m huge", func() { p.MatMul(1<<61, 4, 4, a, b, c) }, "MatMul: len(a) = 64"},
			{"scores lds huge", func() { p.MaskedScores(3, 3, 2, 1, a, 2, b, 2, 0, c, huge) }, "MaskedScores: len(s) = 64"},
			{"scores ldq maxint", func() { p.MaskedScores(3, 3, 2, 1, a, big, b, 2, 0, c, 3) }, "MaskedScores: len(q) = 64"},
			{"scores tk huge", func() { p.MaskedScores(1, huge, 1, 1, a, 1, b, 1, 0, c, huge) }, "MaskedScores: len(k) = 64"},
			{"softmax ldy huge", func() { p.Softmax(3, 4, a, 4, c, huge) }, "Softmax: len(y) = 64"},
			{"softmax m huge", func() { p.Softmax(huge, 4, a, 4, c, 4) }, "Softmax: len(x) = 64"},
			{"softmax backward lddx huge", func() { p.SoftmaxBackward(3, 4, a, 4, b, 4, c, huge) }, "SoftmaxBackward: len(dx) = 64"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				guardC := append([]float32(nil), c...)
				msg := panicMessage(tc.call)
				if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "kernels.") {
					t.Errorf("panic %q, want it to contain %q", msg, tc.want)
				}
				for i := range c {
					if c[i] != guardC[i] {
						t.Fatalf("c[%d] changed before the panic", i)
					}
				}
			})
		}
	})
}

// TestMatrixSpanMessage checks that the length a huge matrix would need
// is reported exactly, or said to exceed the address space.
func TestMatrixSpanMessage(t *testing.T) {
	cases := []struct {
		rows, cols, ld int
		want           string
	}{
		{3, 4, 5, "14"},
		{1, 7, 7, "7"},
		{1 << 40, 2, 1 << 20, "1152921504605798402"},
		{5, 3, 1<<62 + 25, "more than the address space"},
		{math.MaxInt, 1, math.MaxInt, "more than the address space"},
	}
	for _, tc := range cases {
		if got := matrixSpan(tc.rows, tc.cols, tc.ld); !strings.Contains(got, tc.want) {
			t.Errorf("matrixSpan(%d, %d, %d) = %q, want it to contain %q", tc.rows, tc.cols, tc.ld, got, tc.want)
		}
	}
}

// TestOverlapPanics checks that outputs overlapping inputs panic on every
// implementation (their results would differ between implementations),
// while the documented in-place forms still work.
func TestOverlapPanics(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		buf := make([]float32, 256)
		for i := range buf {
			buf[i] = float32(i%7) - 3
		}
		cases := []struct {
			name string
			call func()
			want string // "" means no panic
		}{
			{"gemm c is a", func() { p.Gemm(false, false, 4, 4, 4, 1, buf, 4, buf[100:], 4, 0, buf, 4) }, "Gemm: c overlaps a"},
			{"gemm c inside b", func() { p.Gemm(false, false, 4, 4, 4, 1, buf, 4, buf[100:], 4, 0, buf[110:], 4) }, "Gemm: c overlaps b"},
			{"gemm c interleaved with a", func() { p.Gemm(false, false, 4, 4, 4, 1, buf, 8, buf[200:], 4, 0, buf[4:], 8) }, "Gemm: c overlaps a"},
			{"gemm apart", func() { p.Gemm(false, false, 4, 4, 4, 1, buf, 4, buf[16:], 4, 0, buf[32:], 4) }, ""},
			{"gemm k=0 overlapping", func() { p.Gemm(false, false, 4, 4, 0, 1, buf, 1, buf, 4, 0, buf, 4) }, ""},
			{"matmul c overlaps b", func() { p.MatMul(4, 4, 4, buf, buf[16:], buf[20:]) }, "MatMul: c overlaps b"},
			{"scores s overlaps k", func() { p.MaskedScores(4, 4, 4, 1, buf, 4, buf[16:], 4, 0, buf[20:], 4) }, "MaskedScores: s overlaps k"},
			{"softmax in place", func() { p.Softmax(4, 4, buf[64:], 5, buf[64:], 5) }, ""},
			{"softmax shifted", func() { p.Softmax(4, 4, buf[64:], 4, buf[65:], 4) }, "Softmax: y overlaps x"},
			{"softmax same start other ld", func() { p.Softmax(4, 4, buf[64:], 4, buf[64:], 5) }, "Softmax: y overlaps x"},
			{"softmax backward dx is dy", func() { p.SoftmaxBackward(4, 4, buf[100:], 4, buf[120:], 4, buf[120:], 4) }, ""},
			{"softmax backward dx overlaps y", func() { p.SoftmaxBackward(4, 4, buf[100:], 4, buf[120:], 4, buf[110:], 4) }, "SoftmaxBackward: dx overlaps"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				msg := panicMessage(tc.call)
				if tc.want == "" && msg != "" {
					t.Fatalf("unexpected panic %q", msg)
				}
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q, want it to contain %q", msg, tc.want)
				}
			})
		}
	})
}
