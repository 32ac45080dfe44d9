package main

// The bfloat16 conversions of the GEMM family (gemm.Family.RoundBF16 and
// WidenBF16): the float32 GEMM's rounded bfloat16 products on CPUs
// without FEAT_BF16 round their operands with roundBF16NEON as they pack
// them, and the few-row products over bfloat16 weights widen them with
// widenBF16NEON.
func init() {
	addPart("vecops_arm64.s", "roundBF16", roundBF16)
	addPart("vecops_arm64.s", "widenBF16", widenBF16)
}

// roundBF16 emits roundBF16NEON: each float32 rounded to the nearest
// bfloat16 on its integer bits, as lowbit.FromBF16(lowbit.ToBF16(x)):
// b + 0x7fff + (b>>16 & 1) with the low half cleared (ties to even,
// subnormals kept, overflow to ±Inf), or for a NaN (the lanes where
// FCMGE x, x is false) b | 0x400000 with the low half cleared (made
// quiet, its sign and top payload bits kept). Blocks of 16 floats, then
// single vectors, then one float at a time in lane 0 of a vector (the
// other lanes zero). dst may be x.
//
// Registers: R0 x, R1 dst, R2 count; V24 1, V25 0x7fff, V26 0xffff0000,
// V27 0x400000 in every lane; the values in V0-V3, temporaries in V4-V15.
func roundBF16(f *file) {
	f.fn("roundBF16NEON", "roundBF16",
		"roundBF16NEON sets dst[i] to x[i] rounded to the nearest bfloat16 (ties to even, subnormals kept, a NaN made quiet), as lowbit.FromBF16(lowbit.ToBF16(x[i])). len(x) must be at least len(dst); dst may be x but must not otherwise overlap it. Requires ASIMD. Arguments are not checked.")
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD dst_len+8(FP), R2")
	f.op("MOVD x_base+24(FP), R0")
	for i, c := range []uint32{1, 0x7fff, 0xffff0000, 0x400000} {
		f.op("MOVW $0x%x, R3", c)
		f.op("VDUP R3, V%d.S4", 24+i)
	}
	// round rounds V(v) in place with the temporaries V(t), V(t+1), V(t+2).
	round := func(v, t int) {
		q, ok := t+1, t+2
		f.op("VUSHR $16, V%d.S4, V%d.S4", v, t)
		f.op("VAND V24.B16, V%d.B16, V%d.B16", t, t)
		f.op("VADD V%d.S4, V%d.S4, V%d.S4", v, t, t)
		f.op("VADD V25.S4, V%d.S4, V%d.S4", t, t)
		f.op("VAND V26.B16, V%d.B16, V%d.B16", t, t) // rounded
		f.op("VORR V27.B16, V%d.B16, V%d.B16", v, q)
		f.op("VAND V26.B16, V%d.B16, V%d.B16", q, q) // a NaN's
		f.w(fcmge4s(ok, v, v))                       // all ones but for NaN
		// v = q ^ ((t ^ q) & ok): t where ok, else q.
		f.op("VEOR V%d.B16, V%d.B16, V%d.B16", q, t, t)
		f.op("VAND V%d.B16, V%d.B16, V%d.B16", ok, t, t)
		f.op("VEOR V%d.B16, V%d.B16, V%d.B16", q, t, v)
	}
	f.counted("round_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		for i := 0; i < 4; i++ {
			round(i, 4+3*i)
		}
		f.op("VST1.P %s, 64(R1)", vlist(0, 4))
	})
	f.counted("round_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		round(0, 4)
		f.op("VST1.P %s, 16(R1)", vlist(0, 1))
	})
	f.tail("round_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0") // lanes 1-3 zero
		round(0, 4)
		f.op("FMOVS.P F0, 4(R1)")
	})
	f.op("RET")
}

// widenBF16 emits widenBF16NEON: the whole groups of 32 bfloat16 of src
// as float32 (exact) in lowbit.BF16's order, word d of a group holding
// element d in its low half and element 16+d in its high half: the first
// 16 are the words shifted left by 16, the last 16 the words with the low
// half cleared (V28). One group an iteration; a partial group at the end
// of dst is not written.
func widenBF16(f *file) {
	f.fn("widenBF16NEON", "widenBF16",
		"widenBF16NEON sets dst[32g+d] and dst[32g+16+d] to the float32 values of the bfloat16 src[32g+2d] and src[32g+2d+1] for d < 16 and g < len(dst)/32 (lowbit.BF16's order within a group); a partial group at the end of dst is not written. src must hold the whole groups. Requires ASIMD. Arguments are not checked.")
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD dst_len+8(FP), R2")
	f.op("MOVD src_base+24(FP), R0")
	f.op("LSR $5, R2") // whole groups
	f.op("MOVW $0xffff0000, R3")
	f.op("VDUP R3, V28.S4")
	f.label("widen_group")
	f.op("CBZ R2, widen_done")
	f.op("VLD1.P 64(R0), %s", vlist(0, 4))
	for b := 0; b < 4; b++ {
		f.op("VAND V28.B16, V%d.B16, V%d.B16", b, 4+b)
		f.op("VSHL $16, V%d.S4, V%d.S4", b, b)
	}
	f.op("VST1.P %s, 64(R1)", vlist(0, 4))
	f.op("VST1.P %s, 64(R1)", vlist(4, 4))
	f.op("SUB $1, R2")
	f.op("B widen_group")
	f.label("widen_done")
	f.op("RET")
}
