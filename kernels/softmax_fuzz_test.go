package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// smFuzzValue decodes one softmax input from a byte: mostly a moderate
// value on a grid of 1/4 in [-32, 31.75], and a few codes for special and
// extreme values.
func smFuzzValue(b byte) float32 {
	switch b {
	case 0xff:
		return smNegInf
	case 0xfe:
		return smNaN
	case 0xfd:
		return smInf
	case 0xfc:
		return 3e38
	case 0xfb:
		return -3e38
	case 0xfa:
		return math.Float32frombits(0x7fc001ff) // a NaN with payload bits
	case 0xf9:
		return 5000 // the far reduction
	case 0xf8:
		return math.Float32frombits(3) // subnormal
	}
	return (float32(b) - 128) / 4
}

// FuzzSoftmax decodes a matrix from the fuzz bytes and checks Softmax and
// SoftmaxBackward of every SIMD implementation against generic, with the
// accuracy model of softmax_test.go (same special kinds; relative error
// within smTolSIMD+smTolGeneric of generic for outputs above 1e-30; the
// backward bound of smBackRef, doubled):
//
//	data[0]   bits 0-1: rows m = 1 + b%3; bit 2: raw mode; bit 3: ld = n+1
//	data[1:]  raw mode: 4 bytes per element, little-endian float32 bits
//	          (any value: NaN payloads, infinities, subnormals, extremes);
//	          otherwise one byte per element, see smFuzzValue
//
// The gradient dy of the backward check comes from the same elements,
// reversed, as moderate values (specials replaced by 1).
func FuzzSoftmax(f *testing.F) {
	grid := func(head byte, vals ...byte) []byte { return append([]byte{head}, vals...) }
	f.Add(grid(0, 128, 132, 136))
	f.Add(grid(0))
	f.Add(grid(1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
	f.Add(grid(0, 0xff, 130, 0xfe, 120))
	f.Add(grid(2, 0xfd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17))
	f.Add(grid(0, 0xfc, 0xfb, 128, 0xfc))
	f.Add(grid(8, 0xf9, 0xf9, 10, 20, 0xff, 30))
	f.Add(grid(0, 0xfa, 128, 128))
	f.Add(grid(0, 0xf8, 0xf8, 0xf8))
	long := []byte{1}
	for i := 0; i < 200; i++ {
		long = append(long, byte(i*37))
	}
	f.Add(long)
	tailNaN := []byte{0}
	for i := 0; i < 47; i++ {
		tailNaN = append(tailNaN, byte(100+i))
	}
	f.Add(append(tailNaN, 0xfe))
	raw := []byte{4}
	for _, v := range []float32{1, -2, 3e38, -3e38, float32(math.Inf(-1)), 0.5, 87, -87, 1e-40, 4096} {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	f.Add(raw)
	f.Add(binary.LittleEndian.AppendUint32([]byte{4, 1, 2, 3}, 0x7f800001))
	// Found by fuzzing: a finite entry far below a small maximum in the
	// upper half of a ZMM vector (a 256-bit constant read as 512 bits).
	f.Add([]byte("7000000000000000000000000000000000000000\xfe0000000000000000000000000000000000000000"))

	impls := nonGeneric()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		head, data := data[0], data[1:]
		m := 1 + int(head%3)
		var vals []float32
		if head&4 != 0 {
			for len(data) >= 4 {
				vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(data)))
				data = data[4:]
			}
		} else {
			for _, b := range data {
				vals = append(vals, smFuzzValue(b))
			}
		}
		n := len(vals) / m
		if n > 1<<14 {
			n = 1 << 14
		}
		ld := n
		if head&8 != 0 {
			ld = n + 1
		}
		size := 0
		if n > 0 {
			size = (m-1)*ld + n
		}
		x := make([]float32, size)
		dy := make([]float32, size)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				v := vals[i*n+j]
				x[i*ld+j] = v
				g := vals[len(vals)-1-(i*n+j)]
				if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) || math.Abs(float64(g)) > 100 {
					g = 1
				}
				dy[i*ld+j] = g
			}
		}
		want := make([]float32, size)
		genericImpl.Softmax(m, n, x, ld, want, ld)
		wantDx := make([]float32, size)
		genericImpl.SoftmaxBackward(m, n, want, ld, dy, ld, wantDx, ld)
		for _, p := range impls {
			got := make([]float32, size)
			p.Softmax(m, n, x, ld, got, ld)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					k := i*ld + j
					if _, ok := smCompare(got[k], float64(want[k]), smTolSIMD+smTolGeneric); !ok {
						t.Fatalf("%s: m=%d n=%d ld=%d: y[%d,%d] = %v (x = %v), generic %v", p.Name(), m, n, ld, i, j, got[k], x[k], want[k])
					}
				}
			}
			inplace := append([]float32(nil), x...)
			p.Softmax(m, n, inplace, ld, inplace, ld)
			for k := range got {
				if math.Float32bits(inplace[k]) != math.Float32bits(got[k]) && !(math.IsNaN(float64(inplace[k])) && math.IsNaN(float64(got[k]))) {
					t.Fatalf("%s: in place differs at %d: %v, out of place %v", p.Name(), k, inplace[k], got[k])
				}
			}
			dx := make([]float32, size)
			p.SoftmaxBackward(m, n, want, ld, dy, ld, dx, ld)
			for i := 0; i < m; i++ {
				if n == 0 {
					break
				}
				_, bound := smBackRef(want[i*ld:i*ld+n], dy[i*ld:i*ld+n])
				for j := 0; j < n; j++ {
					k := i*ld + j
					g, w := float64(dx[k]), float64(wantDx[k])
					if math.IsNaN(w) || math.IsNaN(g) {
						if math.IsNaN(w) != math.IsNaN(g) {
							t.Fatalf("%s: dx[%d,%d] = %v, generic %v", p.Name(), i, j, g, w)
						}
						continue
					}
					if !(math.Abs(g-w) <= 2*bound[j]) {
						t.Fatalf("%s: m=%d n=%d: dx[%d,%d] = %v, generic %v (bound %g)", p.Name(), m, n, i, j, g, w, 2*bound[j])
					}
				}
			}
		}
	})
}
