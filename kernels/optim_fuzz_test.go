package kernels

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// FuzzOptim decodes AdamW or SumSquares inputs from the fuzz bytes and
// checks every implementation: AdamW bitwise against generic (a NaN
// matching any NaN), SumSquares within (n+8)·2^-53 relative of the exact
// sum (see optim_test.go):
//
//	data[0]    bit 0: SumSquares (1) or AdamW (0); bits 1-2: the
//	           hyper-parameters, adamCases[b%3] or, for 3, adamCases[0]
//	           with WeightDecay 0
//	data[1]    element offset of the slices (mod 8)
//	data[2:]   two bytes per value (fuzzFloat, special values included);
//	           AdamW takes four per element: params, grads, m, v
func FuzzOptim(f *testing.F) {
	seed := func(head, off byte, n int, pattern func(i int) uint16) []byte {
		b := []byte{head, off}
		for i := 0; i < n; i++ {
			b = binary.LittleEndian.AppendUint16(b, pattern(i))
		}
		return b
	}
	ramp := func(i int) uint16 { return uint16(uint32(i)*2654435761) ^ uint16(i<<5) }
	special := func(i int) uint16 {
		if i%7 == 2 {
			return 0x7f00 | uint16(i%8)
		}
		return uint16(i * 40503)
	}
	for _, head := range []byte{0, 1, 2, 3, 4, 5, 6, 7} {
		for _, n := range []int{0, 1, 5, 17, 33, 70, 129} {
			f.Add(seed(head, byte(n%8), 4*n, ramp))
		}
		f.Add(seed(head, 3, 4*45, special))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		off := int(data[1]) % 8
		var vals []float32
		for b := data[2:]; len(b) >= 2; b = b[2:] {
			vals = append(vals, fuzzFloat(b, true))
		}
		if data[0]&1 == 1 {
			want := exactSumSquares(vals)
			forEachImpl(t, func(t *testing.T, p *Impl) {
				if got := p.SumSquares(offsetCopy(vals, off)); !sumSquaresOK(got, want, len(vals)) {
					t.Fatalf("SumSquares of %d values = %v, exact %v", len(vals), got, want)
				}
			})
			return
		}
		var h AdamWParams
		if k := int(data[0]>>1) % 4; k < len(adamCases) {
			h = adamCases[k]
		} else {
			h = adamCases[0]
			h.WeightDecay = 0
		}
		n := len(vals) / 4
		p0, g0, m0, v0 := vals[:n], vals[n:2*n], vals[2*n:3*n], vals[3*n:4*n]
		wp, wm, wv := runAdam(t, genericImpl, p0, g0, m0, v0, h, 0)
		for _, p := range nonGeneric() {
			gp, gm, gv := runAdam(t, p, p0, g0, m0, v0, h, off)
			what := fmt.Sprintf("%s n=%d", p.Name(), n)
			sameBits(t, what+" params", gp, wp)
			sameBits(t, what+" m", gm, wm)
			sameBits(t, what+" v", gv, wv)
		}
	})
}
