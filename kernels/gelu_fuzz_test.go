package kernels

import (
	"encoding/binary"
	"testing"
)

// FuzzGELU decodes an operation and its inputs from the fuzz bytes and
// checks every implementation against generic and float64 with the
// accuracy model of gelu_test.go:
//
//	data[0]   operation: 0 GELU, 1 GELUBackward, 2 BiasGELU (mod 3)
//	data[1]   element offset of the slices (mod 8); BiasGELU: rows
//	          m = 1 + data[1]/8 % 4
//	data[2:]  two bytes per element, decoded by fuzzFloat with special
//	          values (NaN, ±Inf, ±0, ±MaxFloat32, subnormals; otherwise
//	          k/256, |k| < 32768, which crosses the clamps at ±20).
//	          GELUBackward splits them into x and dy; BiasGELU into an
//	          m×n matrix x and a bias of n.
func FuzzGELU(f *testing.F) {
	seed := func(op, off byte, n int, pattern func(i int) uint16) []byte {
		b := []byte{op, off}
		for i := 0; i < n; i++ {
			b = binary.LittleEndian.AppendUint16(b, pattern(i))
		}
		return b
	}
	ramp := func(i int) uint16 { return uint16(uint32(i)*2654435761) ^ uint16(i<<7) }
	special := func(i int) uint16 {
		if i%7 == 3 {
			return 0x7f00 | uint16(i%8)
		}
		return uint16(i * 40503)
	}
	for op := byte(0); op < 3; op++ {
		for _, n := range []int{0, 1, 5, 9, 17, 33, 64, 70, 130} {
			f.Add(seed(op, byte(n%32), n, ramp))
			f.Add(seed(op, byte(n%32)+3, n, special))
		}
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		op := data[0] % 3
		off := int(data[1]) % 8
		var vals []float32
		for b := data[2:]; len(b) >= 2; b = b[2:] {
			vals = append(vals, fuzzFloat(b, true))
		}
		for _, p := range Implementations() {
			switch op {
			case 0:
				x := offsetCopy(vals, off)
				y := offsetCopy(make([]float32, len(vals)), (off+3)%8)
				p.GELU(y, x)
				geluCheckOut(t, p, "GELU", vals, y, false, nil)
			case 1:
				h := len(vals) / 2
				x0, dy0 := vals[:h], vals[h:2*h]
				dx := offsetCopy(make([]float32, h), (off+5)%8)
				p.GELUBackward(dx, offsetCopy(dy0, off), offsetCopy(x0, (off+1)%8))
				geluCheckOut(t, p, "GELUBackward", x0, dx, true, dy0)
			case 2:
				m := 1 + int(data[1])/8%4
				n := len(vals) / (m + 1)
				x0, bias := vals[:m*n], vals[m*n:m*n+n]
				x := offsetCopy(x0, off)
				y := offsetCopy(make([]float32, m*n), (off+2)%8)
				p.BiasGELU(m, n, x, n, offsetCopy(bias, (off+7)%8), y, n)
				pre := make([]float32, m*n)
				for i := range pre {
					pre[i] = x0[i] + bias[i%max(n, 1)]
					if !bitsEqual(x[i], pre[i]) && (x[i] == x[i] || pre[i] == pre[i]) {
						t.Fatalf("%s BiasGELU m=%d n=%d: x[%d] = %v, want x + bias = %v", p.Name(), m, n, i, x[i], pre[i])
					}
				}
				geluCheckOut(t, p, "BiasGELU", pre, y, false, nil)
			}
		}
	})
}
