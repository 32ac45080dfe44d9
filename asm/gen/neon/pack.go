package main

import "fmt"

// The packers of the GEMM's B panels from grouped low-bit weights: int8
// (lowbit.PackInt8Func) and bfloat16 (gemm.Family.PackBF16). Each packs
// 4 columns of op(B) = Wᵀ (gemm.GroupedCols on arm64: the GEMM's panels
// are 12 and 4 columns wide), that is 4 rows of W, 16 k steps (half a
// group) at a time: the 4 rows' 16 k steps are converted into four
// vectors each (V0-V15, row r's k steps 4b..4b+3 in V(4r+b)), then each
// 4×4 block of rows × k steps is transposed with two rounds of ZIP1/ZIP2
// (V16-V19, then V20-V23) and its four vectors, one k step each, stored
// nr floats apart, so that dst[q*nr+j] = W(j, p0+q).
//
// Registers: R0 chunks left, R1 w, R2 stride, R3 odd, R4 dst (the
// chunk's first panel row), R5 nr in bytes, R6-R9 the 4 rows' groups,
// R10 the panel row being stored; V24-V27 the rows' int8 scales, V28 the
// bfloat16 high-half mask.
func init() {
	addPart("lowbit_arm64.s", "lowbitPackInt8", func(f *file) {
		name := "lowbitPackInt8NEON"
		f.fn(name, "lowbitPackInt8",
			name+" sets dst[q*nr+j] = s*float32(q) of row j (stride bytes apart from w), k step q, for j < 4 and q < 16·chunks, the rows' first k step at the group of w's blocks (its second half when odd is 1; see lowbit.PackInt8Func).")
		packKernel(f, 36, packInt8Row)
	})
	addPart("lowbit_arm64.s", "packBF16", func(f *file) {
		name := "packBF16NEON"
		f.fn(name, "packBF16",
			name+" sets dst[q*nr+j] = the float32 value of row j's bfloat16 (rows stride bytes apart from w), k step q, for j < 4 and q < 16·chunks, the rows' first k step at the group at w (its second half when odd is 1; see gemm.Family.PackBF16).")
		f.op("MOVW $0xffff0000, R11")
		f.op("VDUP R11, V28.S4")
		packKernel(f, 64, packBF16Row)
	})
}

// packInt8Row converts the 16 k steps of the given half of row r's Int8
// block (its scale at 0, its 32 int8 at 4, at R(6+r)) into V(4r)..V(4r+3):
// each weight sign-extended to int32, converted to float32 (exact) and
// multiplied by the scale (one rounding, as lowbit.Int8.At).
func packInt8Row(f *file, r, half int) {
	p := fmt.Sprintf("R%d", 6+r)
	s := 24 + r
	f.op("FMOVS 0(%s), F%d", p, s)
	f.op("FMOVQ %d(%s), F16", 4+16*half, p)
	f.w(sxtl8h(17, 16))
	f.w(sxtl28h(18, 16))
	f.w(sxtl4s(4*r, 17))
	f.w(sxtl24s(4*r+1, 17))
	f.w(sxtl4s(4*r+2, 18))
	f.w(sxtl24s(4*r+3, 18))
	for b := 0; b < 4; b++ {
		f.w(scvtf4s(4*r+b, 4*r+b))
		f.w(fmulElem(4*r+b, 4*r+b, s, 0))
	}
}

// packBF16Row widens the 16 k steps of the given half of row r's group of
// 32 bfloat16 (at R(6+r)) into V(4r)..V(4r+3). Word d of a group holds
// k step d in its low half and 16+d in its high half (lowbit.BF16's
// order): the first half's k steps are the words shifted left by 16, the
// second half's the words with the low half cleared (V28); exact, no
// rounding.
func packBF16Row(f *file, r, half int) {
	f.op("VLD1 (R%d), %s", 6+r, vlist(4*r, 4))
	for b := 0; b < 4; b++ {
		v := 4*r + b
		if half == 0 {
			f.op("VSHL $16, V%d.S4, V%d.S4", v, v)
		} else {
			f.op("VAND V28.B16, V%d.B16, V%d.B16", v, v)
		}
	}
}

// packKernel emits the body of a packer (arguments chunks, w, stride,
// odd, dst, nr) whose groups are groupBytes bytes; row converts the 16 k
// steps of one half of a row's group into four vectors.
func packKernel(f *file, groupBytes int, row func(f *file, r, half int)) {
	f.op("MOVD chunks+0(FP), R0")
	f.op("MOVD w+8(FP), R1")
	f.op("MOVD stride+16(FP), R2")
	f.op("MOVD odd+24(FP), R3")
	f.op("MOVD dst+32(FP), R4")
	f.op("MOVD nr+40(FP), R5")
	f.op("LSL $2, R5")
	f.op("MOVD R1, R6")
	for r := 7; r < 10; r++ {
		f.op("ADD R2, R%d, R%d", r-1, r)
	}
	f.op("CBZ R0, done")
	f.op("CBNZ R3, second")
	chunk := func(half int) {
		for r := 0; r < 4; r++ {
			row(f, r, half)
		}
		f.op("MOVD R4, R10")
		for b := 0; b < 4; b++ {
			// The block of k steps 4b..4b+3: rows x0..x3 in V(4r+b).
			x := func(r int) int { return 4*r + b }
			f.op("VZIP1 V%d.S4, V%d.S4, V16.S4", x(2), x(0)) // x0[0] x2[0] x0[1] x2[1]
			f.op("VZIP2 V%d.S4, V%d.S4, V17.S4", x(2), x(0)) // x0[2] x2[2] x0[3] x2[3]
			f.op("VZIP1 V%d.S4, V%d.S4, V18.S4", x(3), x(1))
			f.op("VZIP2 V%d.S4, V%d.S4, V19.S4", x(3), x(1))
			f.op("VZIP1 V18.S4, V16.S4, V20.S4") // k step 4b: x0[0] x1[0] x2[0] x3[0]
			f.op("VZIP2 V18.S4, V16.S4, V21.S4")
			f.op("VZIP1 V19.S4, V17.S4, V22.S4")
			f.op("VZIP2 V19.S4, V17.S4, V23.S4")
			for i := 0; i < 4; i++ {
				f.op("FMOVQ F%d, (R10)", 20+i)
				f.op("ADD R5, R10")
			}
		}
		f.op("MOVD R10, R4") // 16 panel rows on
	}
	f.label("first")
	chunk(0)
	f.op("SUBS $1, R0")
	f.op("BEQ done")
	f.label("second")
	chunk(1)
	for r := 6; r < 10; r++ {
		f.op("ADD $%d, R%d", groupBytes, r) // the next group
	}
	f.op("SUBS $1, R0")
	f.op("BNE first")
	f.label("done")
	f.op("RET")
}
