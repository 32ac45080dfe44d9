package main

// vecops generates the vector operations. Each processes blocks of 16
// floats with four independent vectors (four accumulators for the
// reductions), then single vectors, then a scalar tail.
func init() { emitters = append(emitters, vecops) }

func vecops() *file {
	f := newFile("vecops_arm64.s")

	f.fn("dotNEON", "dot",
		"dotNEON returns the sum of x[i]*y[i]. len(y) must equal len(x). It keeps four vector accumulators and uses FMA, so the rounding differs from a sequential loop. Requires ASIMD. Arguments are not checked.")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.op("MOVD y_base+24(FP), R1")
	f.dot("dot", "R0", "R1", "R2")
	f.op("FMOVS F16, ret+48(FP)")
	f.op("RET")

	f.fn("axpyNEON", "axpy",
		"axpyNEON sets y[i] += alpha*x[i] with a fused multiply-add (one rounding). len(y) must equal len(x). Requires ASIMD. Arguments are not checked.")
	f.op("FMOVS alpha+0(FP), F31")
	f.op("VDUP V31.S[0], V31.S4")
	f.op("MOVD x_base+8(FP), R0")
	f.op("MOVD x_len+16(FP), R2")
	f.op("MOVD y_base+32(FP), R1")
	f.counted("axpy_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		f.op("VLD1 (R1), %s", vlist(4, 4))
		for i := 0; i < 4; i++ {
			f.op("VFMLA V%d.S4, V31.S4, V%d.S4", i, 4+i)
		}
		f.op("VST1.P %s, 64(R1)", vlist(4, 4))
	})
	f.counted("axpy_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.op("VLD1 (R1), %s", vlist(4, 1))
		f.op("VFMLA V0.S4, V31.S4, V4.S4")
		f.op("VST1.P %s, 16(R1)", vlist(4, 1))
	})
	f.tail("axpy_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS (R1), F1")
		f.op("FMADDS F0, F1, F31, F1") // F1 = F31*F0 + F1
		f.op("FMOVS.P F1, 4(R1)")
	})
	f.op("RET")

	f.fn("scaleNEON", "scale",
		"scaleNEON sets x[i] *= alpha. Requires ASIMD.")
	f.op("FMOVS alpha+0(FP), F31")
	f.op("MOVD x_base+8(FP), R0")
	f.op("MOVD x_len+16(FP), R2")
	f.scaleLoop("scale", "R0", "R2", 31)
	f.op("RET")

	f.fn("addNEON", "add",
		"addNEON sets dst[i] = x[i] + y[i]. x and y must be as long as dst; dst may be x or y (the same slice), but must not otherwise overlap them. Requires ASIMD. Arguments are not checked.")
	f.op("MOVD dst_base+0(FP), R3")
	f.op("MOVD dst_len+8(FP), R2")
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD y_base+48(FP), R1")
	f.counted("add_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		f.op("VLD1.P 64(R1), %s", vlist(4, 4))
		for i := 0; i < 4; i++ {
			f.w(fadd4s(i, i, 4+i))
		}
		f.op("VST1.P %s, 64(R3)", vlist(0, 4))
	})
	f.counted("add_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.op("VLD1.P 16(R1), %s", vlist(4, 1))
		f.w(fadd4s(0, 0, 4))
		f.op("VST1.P %s, 16(R3)", vlist(0, 1))
	})
	f.tail("add_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMOVS.P 4(R1), F1")
		f.op("FADDS F0, F1, F1")
		f.op("FMOVS.P F1, 4(R3)")
	})
	f.op("RET")

	f.fn("sumNEON", "sum",
		"sumNEON returns the sum of the elements of x, 0 if x is empty. It keeps four vector accumulators, so the rounding differs from a sequential loop. Requires ASIMD.")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.zero(16, 4)
	f.counted("sum_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		for i := 0; i < 4; i++ {
			f.w(fadd4s(16+i, 16+i, i))
		}
	})
	f.counted("sum_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.w(fadd4s(16, 16, 0))
	})
	f.reduceAdd(16)
	f.tail("sum_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FADDS F0, F16, F16")
	})
	f.op("FMOVS F16, ret+24(FP)")
	f.op("RET")

	f.fn("maxNEON", "max",
		"maxNEON returns the largest element of x, -Inf if x is empty, and a NaN if any element is NaN (which NaN is unspecified: FMAX returns one of its NaN operands, quieted, where generic.Max returns the first). The sign of a zero result is unspecified when x holds both +0 and -0. Requires ASIMD.")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.op("MOVW $0xff800000, R3") // -Inf
	for i := 16; i < 20; i++ {
		f.op("VDUP R3, V%d.S4", i)
	}
	f.counted("max_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		for i := 0; i < 4; i++ {
			f.w(fmax4s(16+i, 16+i, i))
		}
	})
	f.counted("max_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.w(fmax4s(16, 16, 0))
	})
	f.w(fmax4s(16, 16, 17))
	f.w(fmax4s(18, 18, 19))
	f.w(fmax4s(16, 16, 18))
	f.w(fmaxv(16, 16))
	f.tail("max_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FMAXS F0, F16, F16")
	})
	f.op("FMOVS F16, ret+24(FP)")
	f.op("RET")
	return f
}

// dot emits S16 = sum x[i]*y[i] over cnt elements at px and py (all
// advanced), with four vector accumulators V16-V19; it uses V0-V7.
func (f *file) dot(name, px, py, cnt string) {
	f.zero(16, 4)
	f.counted(name+"_block", cnt, 16, func() {
		f.op("VLD1.P 64(%s), %s", px, vlist(0, 4))
		f.op("VLD1.P 64(%s), %s", py, vlist(4, 4))
		for i := 0; i < 4; i++ {
			f.op("VFMLA V%d.S4, V%d.S4, V%d.S4", i, 4+i, 16+i)
		}
	})
	f.counted(name+"_single", cnt, 4, func() {
		f.op("VLD1.P 16(%s), %s", px, vlist(0, 1))
		f.op("VLD1.P 16(%s), %s", py, vlist(4, 1))
		f.op("VFMLA V0.S4, V4.S4, V16.S4")
	})
	f.reduceAdd(16)
	f.tail(name+"_tail", cnt, func() {
		f.op("FMOVS.P 4(%s), F0", px)
		f.op("FMOVS.P 4(%s), F1", py)
		f.op("FMADDS F0, F16, F1, F16") // F16 = F1*F0 + F16
	})
}

// reduceAdd leaves the sum of the 16 lanes of V(r)..V(r+3) in S(r).
func (f *file) reduceAdd(r int) {
	f.w(fadd4s(r, r, r+1))
	f.w(fadd4s(r+2, r+2, r+3))
	f.w(fadd4s(r, r, r+2))
	f.w(faddp4s(r, r, r))
	f.w(faddpS(r, r))
}

// scaleLoop emits x[i] *= S(s) over cnt elements at px (advanced); it
// uses V0-V3.
func (f *file) scaleLoop(name, px, cnt string, s int) {
	f.counted(name+"_block", cnt, 16, func() {
		f.op("VLD1 (%s), %s", px, vlist(0, 4))
		for i := 0; i < 4; i++ {
			f.w(fmulElem(i, i, s, 0))
		}
		f.op("VST1.P %s, 64(%s)", vlist(0, 4), px)
	})
	f.counted(name+"_single", cnt, 4, func() {
		f.op("VLD1 (%s), %s", px, vlist(0, 1))
		f.w(fmulElem(0, 0, s, 0))
		f.op("VST1.P %s, 16(%s)", vlist(0, 1), px)
	})
	f.tail(name+"_tail", cnt, func() {
		f.op("FMOVS (%s), F0", px)
		f.op("FMULS F%d, F0, F0", s)
		f.op("FMOVS.P F0, 4(%s)", px)
	})
}
