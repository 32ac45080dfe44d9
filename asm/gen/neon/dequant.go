package main

func init() { addPart("lowbit_arm64.s", "lowbitDequantInt8", lowbitDequant) }

// lowbitDequant emits lowbitDequantInt8NEON (lowbit.DequantFunc):
// dst[32g+p] = s_g·float32(q_g[p]) for g < groups, p < 32, over the
// groups consecutive Int8 blocks at w (36 bytes: the float32 scale s_g,
// then the int8 q_g). Each weight is sign-extended to int32 (two SXTLs),
// converted to float32 (exact) and multiplied by the scale: one rounding,
// as Go's s*float32(q) (generic.DequantizeInt8). A group is one
// iteration.
//
// Registers: R0 groups left, R1 w, R2 dst; V0 the scale, V1-V2 the
// bytes, V3-V6 halfwords, V7-V14 the eight vectors of a group.
func lowbitDequant(f *file) {
	f.fn("lowbitDequantInt8NEON", "lowbitDequantInt8",
		"lowbitDequantInt8NEON sets dst[32g+p] = s_g*float32(q_g[p]) for g < groups, p < 32, over the groups consecutive Int8 blocks at w (see lowbit.DequantFunc).")
	f.op("MOVD groups+0(FP), R0")
	f.op("MOVD w+8(FP), R1")
	f.op("MOVD dst+16(FP), R2")
	f.label("loop")
	f.op("CBZ R0, done")
	f.op("FMOVS 0(R1), F0")
	f.op("FMOVQ 4(R1), F1")
	f.op("FMOVQ 20(R1), F2")
	f.w(sxtl8h(3, 1))
	f.w(sxtl28h(4, 1))
	f.w(sxtl8h(5, 2))
	f.w(sxtl28h(6, 2))
	for h := 0; h < 4; h++ {
		f.w(sxtl4s(7+2*h, 3+h))
		f.w(sxtl24s(8+2*h, 3+h))
	}
	for v := 7; v < 15; v++ {
		f.w(scvtf4s(v, v))
		f.w(fmulElem(v, v, 0, 0))
		f.op("FMOVQ F%d, %d(R2)", v, 16*(v-7))
	}
	f.op("ADD $36, R1")
	f.op("ADD $128, R2")
	f.op("SUB $1, R0")
	f.op("B loop")
	f.label("done")
	f.op("RET")
}
