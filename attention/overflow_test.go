package attention

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestOverflowingSizes checks that sizes whose products do not fit in an
// int panic (or return an error) naming the function and the numbers,
// instead of wrapping around to a small size that passes the length
// checks: b = t = 2^32 once made b*t = 0 on 64-bit.
func TestOverflowingSizes(t *testing.T) {
	const c = 8
	l := newLayer(t, nil, c, 2)
	x := make([]float32, 48)
	half := 1 << (strconv.IntSize / 2)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"Forward b*t wraps", func() { l.Forward(x, x, half, half) }, "attention.Layer.Forward: len(qkv) = 48, want >= 3*b*t*C"},
		{"Forward b*t*C overflows", func() { l.Forward(x, x, math.MaxInt/4, 3) }, "more than an int holds"},
		{"Forward 3*b*t*C overflows", func() { l.Forward(x, x, math.MaxInt/3/8/2+1, 2) }, "more than an int holds"},
		{"Fused b*t wraps", func() { l.NewFused().Forward(x, x, half, half) }, "attention.Fused.Forward: len(qkv) = 48, want >= 3*b*t*C"},
		{"Decode n beyond the cache", func() { l.NewDecoder(4).Decode(x, x, math.MaxInt/2) }, "attention.Decoder.Decode: Len() = 0 plus n = "},
		{"NewDecoder maxT", func() { l.NewDecoder(math.MaxInt) }, fmt.Sprintf("attention.Layer.NewDecoder: maxT = %d, must be <= %d for C = 8", math.MaxInt, math.MaxInt/4/c-32)},
		{"NewDecoder maxT at the bound", func() { l.NewDecoder(math.MaxInt/4/c - 31) }, "attention.Layer.NewDecoder: maxT = "},
		{"NewSingleHead too wide", func() { NewSingleHead(math.MaxInt) }, "attention.NewSingleHead: c = "},
		{"NewSingleHead just too wide", func() { NewSingleHead(maxC + 1) }, "attention.NewSingleHead: c = "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), x...)
			mustPanic(t, tc.f, tc.want)
			for i := range x {
				if x[i] != before[i] {
					t.Fatalf("x[%d] written before the panic", i)
				}
			}
		})
	}
	if _, err := NewMultiHead(math.MaxInt, 1); err == nil || !strings.Contains(err.Error(), "attention.NewMultiHead: C = ") {
		t.Errorf("NewMultiHead(MaxInt, 1) = %v, want an error naming C", err)
	}
	// The widest width's row of qkv is an int.
	if 3*maxC <= 0 || 3*maxC < maxC {
		t.Errorf("3*maxC = %d overflows", 3*maxC)
	}
}

// TestProduct checks the overflow-safe product behind the size checks.
func TestProduct(t *testing.T) {
	for _, tc := range []struct {
		vals []int
		want int
		ok   bool
	}{
		{[]int{2, 3, 4}, 24, true},
		{[]int{0, math.MaxInt, math.MaxInt}, 0, true},
		{[]int{math.MaxInt, 1}, math.MaxInt, true},
		{[]int{math.MaxInt, 2}, 0, false},
		{[]int{1 << (strconv.IntSize / 2), 1 << (strconv.IntSize / 2)}, 0, false},
		{[]int{1 << (strconv.IntSize/2 - 1), 1 << (strconv.IntSize/2 - 1)}, 1 << (strconv.IntSize - 2), true},
		{[]int{1 << (strconv.IntSize/2 - 1), 1 << (strconv.IntSize / 2)}, 0, false}, // MaxInt+1
	} {
		got, ok := product(tc.vals...)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("product(%v) = %d, %v; want %d, %v", tc.vals, got, ok, tc.want, tc.ok)
		}
	}
	if s := productString(1<<(strconv.IntSize/2), 1<<(strconv.IntSize/2)); !strings.Contains(s, "more than an int holds") {
		t.Errorf("productString of an overflowing product = %q", s)
	}
}
