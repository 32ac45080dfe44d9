package main

// layerNorm generates layerNormRowNEON, the LayerNorm of one row in three
// passes over x, the reference loop of generic.LayerNormRow:
//
//	mean = sum(x) / n                           (V16-V19, then a scalar tail)
//	rstd = 1 / sqrt(sum((x-mean)²) / n + eps)   (V16-V19, FMLA)
//	y    = gamma*((x-mean)*rstd) + beta         (FMLA)
//
// mean and rstd are float32 (generic takes the square root in float64);
// the sums are in another order than generic's. Registers: R0 x, R1 gamma,
// R4 beta, R3 y, R2 the count; S20 n, S21/V22 mean, S25/V26 rstd.
func init() { emitters = append(emitters, layerNorm) }

func layerNorm() *file {
	f := newFile("layernorm_arm64.s")
	f.fn("layerNormRowNEON", "layerNormRow",
		"layerNormRowNEON normalises the row x (len(x) >= 1) into y = (x-mean)*rstd*gamma + beta and returns mean and rstd = 1/sqrt(variance+eps); y, gamma and beta must be at least as long as x, and y may be x. Requires ASIMD. Arguments are not checked.",
		"len(x) >= 1; y, gamma and beta at least as long as x; y may be x.")

	// Pass 1: the sum.
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD x_len+32(FP), R2")
	f.zero(16, 4)
	f.counted("ln_sum_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		for i := 0; i < 4; i++ {
			f.w(fadd4s(16+i, 16+i, i))
		}
	})
	f.counted("ln_sum_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.w(fadd4s(16, 16, 0))
	})
	f.reduceAdd(16)
	f.tail("ln_sum_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FADDS F0, F16, F16")
	})
	f.op("MOVD x_len+32(FP), R2")
	f.op("SCVTFS R2, F20")
	f.op("FDIVS F20, F16, F21") // mean = sum / n
	f.op("FMOVS F21, mean+104(FP)")
	f.op("VDUP V21.S[0], V22.S4")

	// Pass 2: the sum of squared deviations.
	f.op("MOVD x_base+24(FP), R0")
	f.zero(16, 4)
	f.counted("ln_var_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		for i := 0; i < 4; i++ {
			f.w(fsub4s(i, i, 22))
			f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", i, i, 16+i)
		}
	})
	f.counted("ln_var_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.w(fsub4s(0, 0, 22))
		f.op("VFMLA V0.S4, V0.S4, V16.S4")
	})
	f.reduceAdd(16)
	f.tail("ln_var_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FSUBS F21, F0, F0")
		f.op("FMADDS F0, F16, F0, F16") // F16 = F0*F0 + F16
	})
	f.op("FDIVS F20, F16, F16") // variance
	f.op("FMOVS eps+96(FP), F23")
	f.op("FADDS F23, F16, F16")
	f.op("FSQRTS F16, F16")
	f.op("FMOVS $1.0, F24")
	f.op("FDIVS F16, F24, F25") // rstd
	f.op("FMOVS F25, rstd+108(FP)")
	f.op("VDUP V25.S[0], V26.S4")

	// Pass 3: the output.
	f.op("MOVD y_base+0(FP), R3")
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD gamma_base+48(FP), R1")
	f.op("MOVD beta_base+72(FP), R4")
	f.op("MOVD x_len+32(FP), R2")
	f.counted("ln_out_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		f.op("VLD1.P 64(R1), %s", vlist(4, 4))
		f.op("VLD1.P 64(R4), %s", vlist(8, 4))
		for i := 0; i < 4; i++ {
			f.w(fsub4s(i, i, 22))
			f.w(fmul4s(i, i, 26))
			f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", i, 4+i, 8+i)
		}
		f.op("VST1.P %s, 64(R3)", vlist(8, 4))
	})
	f.counted("ln_out_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.op("VLD1.P 16(R1), %s", vlist(4, 1))
		f.op("VLD1.P 16(R4), %s", vlist(8, 1))
		f.w(fsub4s(0, 0, 22))
		f.w(fmul4s(0, 0, 26))
		f.op("VFMLA V0.S4, V4.S4, V8.S4")
		f.op("VST1.P %s, 16(R3)", vlist(8, 1))
	})
	f.tail("ln_out_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS.P 4(R1), F1")
		f.op("FMOVS.P 4(R4), F2")
		f.op("FSUBS F21, F0, F0")
		f.op("FMULS F25, F0, F0")
		f.op("FMADDS F1, F2, F0, F2") // F2 = F0*F1 + F2
		f.op("FMOVS.P F2, 4(R3)")
	})
	f.op("RET")

	layerNormBackward(f)
	return f
}

// layerNormBackward generates layerNormBackwardRowNEON, the reference loop
// of generic.LayerNormBackwardRow in two passes with xhat = (x-mean)*rstd
// and dn = dy*gamma recomputed in each:
//
//	sd = sum(dn), sdx = sum(dn*xhat), dgamma += dy*xhat, dbeta += dy
//	dx += rstd*(dn - sd/n - xhat*sdx/n)
//
// Registers: R0 x, R1 dy, R3 gamma, R4 dgamma, R5 dbeta, R6 dx, R2 the
// count; V28 mean, V29 rstd, V16-V17 and V18-V19 the sums, V24 sd/n, V25
// sdx/n.
func layerNormBackward(f *file) {
	f.fn("layerNormBackwardRowNEON", "layerNormBackwardRow",
		"layerNormBackwardRowNEON accumulates the LayerNorm gradients of the row x (len(x) >= 1) into dx, dgamma and dbeta; every other slice must be at least as long as x. Requires ASIMD. Arguments are not checked.",
		"len(x) >= 1; every other slice at least as long as x.")
	f.op("FMOVS mean+144(FP), F28")
	f.op("VDUP V28.S[0], V28.S4")
	f.op("FMOVS rstd+148(FP), F29")
	f.op("VDUP V29.S[0], V29.S4")

	// Pass 1: the sums and the parameter gradients.
	f.op("MOVD x_base+48(FP), R0")
	f.op("MOVD dy_base+24(FP), R1")
	f.op("MOVD gamma_base+72(FP), R3")
	f.op("MOVD dgamma_base+96(FP), R4")
	f.op("MOVD dbeta_base+120(FP), R5")
	f.op("MOVD x_len+56(FP), R2")
	f.zero(16, 4)
	f.counted("lnb_sums_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		f.op("VLD1.P 64(R1), %s", vlist(4, 4))
		f.op("VLD1.P 64(R3), %s", vlist(8, 4))
		f.op("VLD1 (R4), %s", vlist(12, 4))
		f.op("VLD1 (R5), %s", vlist(20, 4))
		for i := 0; i < 4; i++ {
			f.w(fsub4s(i, i, 28))
			f.w(fmul4s(i, i, 29)) // xhat
			f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", i, 4+i, 12+i)
			f.w(fadd4s(20+i, 20+i, 4+i))
			f.w(fmul4s(8+i, 8+i, 4+i)) // dn
			f.w(fadd4s(16+i%2, 16+i%2, 8+i))
			f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", 8+i, i, 18+i%2)
		}
		f.op("VST1.P %s, 64(R4)", vlist(12, 4))
		f.op("VST1.P %s, 64(R5)", vlist(20, 4))
	})
	f.counted("lnb_sums_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.op("VLD1.P 16(R1), %s", vlist(4, 1))
		f.op("VLD1.P 16(R3), %s", vlist(8, 1))
		f.op("VLD1 (R4), %s", vlist(12, 1))
		f.op("VLD1 (R5), %s", vlist(20, 1))
		f.w(fsub4s(0, 0, 28))
		f.w(fmul4s(0, 0, 29))
		f.op("VFMLA V0.S4, V4.S4, V12.S4")
		f.w(fadd4s(20, 20, 4))
		f.w(fmul4s(8, 8, 4))
		f.w(fadd4s(16, 16, 8))
		f.op("VFMLA V8.S4, V0.S4, V18.S4")
		f.op("VST1.P %s, 16(R4)", vlist(12, 1))
		f.op("VST1.P %s, 16(R5)", vlist(20, 1))
	})
	for _, r := range []int{16, 18} {
		f.w(fadd4s(r, r, r+1))
		f.w(faddp4s(r, r, r))
		f.w(faddpS(r, r))
	}
	f.tail("lnb_sums_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS.P 4(R1), F1")
		f.op("FMOVS.P 4(R3), F2")
		f.op("FMOVS (R4), F3")
		f.op("FMOVS (R5), F4")
		f.op("FSUBS F28, F0, F0")
		f.op("FMULS F29, F0, F0")     // xhat
		f.op("FMADDS F0, F3, F1, F3") // dgamma += dy*xhat
		f.op("FADDS F1, F4, F4")      // dbeta += dy
		f.op("FMOVS.P F3, 4(R4)")
		f.op("FMOVS.P F4, 4(R5)")
		f.op("FMULS F2, F1, F1")        // dn
		f.op("FADDS F1, F16, F16")      // sd += dn
		f.op("FMADDS F0, F18, F1, F18") // sdx += dn*xhat
	})
	f.op("MOVD x_len+56(FP), R2")
	f.op("SCVTFS R2, F20")
	f.op("FDIVS F20, F16, F16")
	f.op("FDIVS F20, F18, F18")
	f.op("VDUP V16.S[0], V24.S4")
	f.op("VDUP V18.S[0], V25.S4")

	// Pass 2: dx.
	f.op("MOVD x_base+48(FP), R0")
	f.op("MOVD dy_base+24(FP), R1")
	f.op("MOVD gamma_base+72(FP), R3")
	f.op("MOVD dx_base+0(FP), R6")
	f.counted("lnb_dx_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		f.op("VLD1.P 64(R1), %s", vlist(4, 4))
		f.op("VLD1.P 64(R3), %s", vlist(8, 4))
		f.op("VLD1 (R6), %s", vlist(12, 4))
		for i := 0; i < 4; i++ {
			f.w(fsub4s(i, i, 28))
			f.w(fmul4s(i, i, 29))
			f.w(fmul4s(4+i, 4+i, 8+i))
			f.w(fsub4s(4+i, 4+i, 24))
			f.op("VFMLS V%d.S4, V25.S4, V%d.S4", i, 4+i)
			f.op("VFMLA V%d.S4, V29.S4, V%d.S4", 4+i, 12+i)
		}
		f.op("VST1.P %s, 64(R6)", vlist(12, 4))
	})
	f.counted("lnb_dx_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.op("VLD1.P 16(R1), %s", vlist(4, 1))
		f.op("VLD1.P 16(R3), %s", vlist(8, 1))
		f.op("VLD1 (R6), %s", vlist(12, 1))
		f.w(fsub4s(0, 0, 28))
		f.w(fmul4s(0, 0, 29))
		f.w(fmul4s(4, 4, 8))
		f.w(fsub4s(4, 4, 24))
		f.op("VFMLS V0.S4, V25.S4, V4.S4")
		f.op("VFMLA V4.S4, V29.S4, V12.S4")
		f.op("VST1.P %s, 16(R6)", vlist(12, 1))
	})
	f.tail("lnb_dx_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS.P 4(R1), F1")
		f.op("FMOVS.P 4(R3), F2")
		f.op("FMOVS (R6), F3")
		f.op("FSUBS F28, F0, F0")
		f.op("FMULS F29, F0, F0")
		f.op("FMULS F2, F1, F1")
		f.op("FSUBS F16, F1, F1")
		f.op("FMSUBS F0, F1, F18, F1") // dn -= sdx/n * xhat
		f.op("FMADDS F29, F3, F1, F3") // dx += rstd*dn
		f.op("FMOVS.P F3, 4(R6)")
	})
	f.op("RET")
}
