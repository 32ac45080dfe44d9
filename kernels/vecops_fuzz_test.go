package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// vecFuzzOps names the operations FuzzVec can pick, by its first byte.
var vecFuzzOps = []string{"Dot", "Axpy", "Scale", "Add", "Sum", "Max"}

// fuzzFloat decodes one float32 from two bytes. Most codes give a
// moderate value k/256 (|k| < 32768), so that sums and products stay far
// from overflow and the tolerances of TestDot apply. When specials is set
// (the exact operations Scale, Add and Max), a high byte of 0x7f or 0x80
// selects a special value by the low byte instead: NaNs with payloads,
// ±Inf, ±0, ±MaxFloat32, subnormals.
func fuzzFloat(b []byte, specials bool) float32 {
	u := binary.LittleEndian.Uint16(b)
	if specials && (b[1] == 0x7f || b[1] == 0x80) {
		lo := uint32(b[0])
		switch lo % 8 {
		case 0:
			return vecNaN(lo + 1)
		case 1:
			return float32(math.Inf(1))
		case 2:
			return float32(math.Inf(-1))
		case 3:
			return float32(math.Copysign(0, -1))
		case 4:
			return 0
		case 5:
			return math.MaxFloat32
		case 6:
			return -math.MaxFloat32
		default:
			return math.Float32frombits(lo) // subnormal
		}
	}
	return float32(int16(u)) / 256
}

// FuzzVec decodes an operation, an implementation-independent input and
// a slice offset from the fuzz bytes and checks every SIMD implementation
// against generic, with the tolerances of vec_test.go:
//
//	data[0]     operation (mod 6, see vecFuzzOps)
//	data[1]     element offset of the slices (mod 8)
//	data[2:4]   alpha (Axpy, Scale)
//	data[4:]    two bytes per element; binary operations split the
//	            elements into x (first half) and y (second half)
func FuzzVec(f *testing.F) {
	seed := func(op, off byte, n int, pattern func(i int) uint16) []byte {
		b := []byte{op, off, 0x5e, 0x00} // alpha = 94/256
		for i := 0; i < n; i++ {
			b = binary.LittleEndian.AppendUint16(b, pattern(i))
		}
		return b
	}
	ramp := func(i int) uint16 { return uint16(uint32(i)*2654435761) ^ uint16(i<<7) }
	for op := range vecFuzzOps {
		for _, n := range []int{0, 1, 7, 9, 17, 33, 64, 70, 130, 257} {
			f.Add(seed(byte(op), byte(n%8), n, ramp))
		}
	}
	// Special values for the exact operations: NaN, Inf and zeros in the
	// head, the middle and the masked tail.
	special := func(i int) uint16 {
		if i%11 == 3 {
			return 0x7f00 | uint16(i%8)
		}
		return uint16(i * 40503)
	}
	for _, op := range []byte{2, 3, 5} {
		for _, n := range []int{5, 23, 45, 100} {
			f.Add(seed(op, 3, n, special))
		}
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		op := int(data[0]) % len(vecFuzzOps)
		off := int(data[1]) % 8
		exact := op == 2 || op == 3 || op == 5
		alpha := fuzzFloat(data[2:4], exact)
		var vals []float32
		for b := data[4:]; len(b) >= 2; b = b[2:] {
			vals = append(vals, fuzzFloat(b, exact))
		}
		x0, y0 := vals, vals[:0]
		if op == 0 || op == 1 || op == 3 {
			x0, y0 = vals[:len(vals)/2], vals[len(vals)/2:len(vals)/2*2]
		}
		n := len(x0)
		for _, p := range nonGeneric() {
			x := offsetCopy(x0, off)
			y := offsetCopy(y0, (off+3)%8)
			switch vecFuzzOps[op] {
			case "Dot", "Sum":
				var got, want float32
				var mag float64
				if op == 0 {
					got, want = p.Dot(x, y), genericImpl.Dot(x0, y0)
					for i := range x0 {
						mag += math.Abs(float64(x0[i]) * float64(y0[i]))
					}
				} else {
					got, want = p.Sum(x), genericImpl.Sum(x0)
					for _, v := range x0 {
						mag += math.Abs(float64(v))
					}
				}
				if tol := 2 * sumTol(n, mag); !closeTo(got, want, tol) {
					t.Fatalf("%s %s n=%d: %v, generic %v (tol %g)", p.Name(), vecFuzzOps[op], n, got, want, tol)
				}
			case "Axpy":
				want := append([]float32(nil), y0...)
				genericImpl.Axpy(alpha, x0, want)
				p.Axpy(alpha, x, y)
				for i := range y {
					tol := float32Eps * (math.Abs(float64(alpha)*float64(x0[i])) + math.Abs(float64(y0[i])))
					if !closeTo(y[i], want[i], tol) {
						t.Fatalf("%s Axpy n=%d alpha=%v: y[%d] = %v, generic %v", p.Name(), n, alpha, i, y[i], want[i])
					}
				}
			case "Scale":
				want := append([]float32(nil), x0...)
				genericImpl.Scale(alpha, want)
				p.Scale(alpha, x)
				fuzzExact(t, p, "Scale", x, want)
			case "Add":
				want := make([]float32, n)
				genericImpl.Add(want, x0, y0)
				d := offsetCopy(make([]float32, n), (off+5)%8)
				p.Add(d, x, y)
				fuzzExact(t, p, "Add", d, want)
			case "Max":
				if got, want := p.Max(x), genericImpl.Max(x0); !sameMax(got, want) {
					t.Fatalf("%s Max n=%d: %v (%#x), generic %v (%#x)", p.Name(), n, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
	})
}

// fuzzExact fails unless got equals want bitwise, except that a NaN need
// only match a NaN: which input NaN's payload an addition propagates
// depends on the operand order the compiler chose.
func fuzzExact(t *testing.T, p *Impl, op string, got, want []float32) {
	t.Helper()
	for i := range want {
		if want[i] != want[i] && got[i] != got[i] {
			continue
		}
		if !bitsEqual(got[i], want[i]) {
			t.Fatalf("%s %s n=%d: element %d = %v, generic %v", p.Name(), op, len(want), i, got[i], want[i])
		}
	}
}
