package main

// Optimizer kernels.
//
// adamwNEON(p, g, m, v, scale, b1, c1, b2, c2, ic1, ic2, eps, wd, lr)
// applies one AdamW step with the operations of generic.AdamW, each
// rounded on its own (FMUL, FADD, FSQRT, FDIV, FSUB; no FMLA), so that
// its results are bitwise those of the Go reference:
//
//	g  = G*scale
//	mi = b1*M + c1*g;          M = mi
//	vi = b2*V + (c2*g)*g;      V = vi
//	u  = (mi*ic1) / (sqrt(vi*ic2) + eps)
//	u  = u + wd*P              (only in the loop taken when wd != 0)
//	P  = P - lr*u
//
// in blocks of four vectors, then single vectors, then a scalar tail with
// the same operations on single floats.
//
// sumSquaresNEON(x) widens each float to float64 (FCVTL, FCVTL2), where
// its square is exact, and accumulates the squares with FMLA .2D in eight
// accumulators (one rounding per addition), which are added pairwise at
// the end; the scalar tail adds its squares to that sum.

// Registers of adamwNEON's scalars, in the order of its signature.
const (
	vaScale = 16 + iota
	vaB1
	vaC1
	vaB2
	vaC2
	vaIC1
	vaIC2
	vaEps
	vaWd
	vaLR
)

// adamScalars names the float32 parameters of adamwNEON in order.
var adamScalars = []string{"scale", "b1", "c1", "b2", "c2", "ic1", "ic2", "eps", "wd", "lr"}

func init() { emitters = append(emitters, optim) }

func optim() *file {
	f := newFile("optim_arm64.s")
	f.fn("adamwNEON", "adamw",
		"adamwNEON applies one AdamW step to p[i], m[i] and v[i] for i < len(p) from the gradients g: g, m and v must be as long as p (not checked) and no two may overlap; c1 = 1-b1 and c2 = 1-b2 as float32. The weight-decay term is added only if wd != 0. Each operation is rounded as in generic.AdamW (no fused multiply-add), so the results are bitwise the same. See asm/gen/neon/optim.go. Requires ASIMD.")
	f.op("MOVD p_base+0(FP), R0")
	f.op("MOVD g_base+24(FP), R1")
	f.op("MOVD m_base+48(FP), R2")
	f.op("MOVD v_base+72(FP), R3")
	for i, s := range adamScalars {
		f.op("FMOVS %s+%d(FP), F%d", s, 96+4*i, vaScale+i)
		f.op("VDUP V%d.S[0], V%d.S4", vaScale+i, vaScale+i)
	}
	f.op("FMOVS wd+128(FP), F0")
	f.op("FCMPS $(0.0), F0")
	f.op("BNE adamw_decay") // wd != 0, or NaN (unordered)
	for _, decay := range []bool{false, true} {
		pre := "adamw_plain"
		if decay {
			f.label("adamw_decay")
			pre = "adamw_decayed"
		}
		f.op("MOVD p_len+8(FP), R4")
		f.counted(pre+"_block", "R4", 16, func() { f.adamVecs(4, decay) })
		f.counted(pre+"_single", "R4", 4, func() { f.adamVecs(1, decay) })
		f.tail(pre+"_tail", "R4", func() { f.adamScalar(decay) })
		f.op("RET")
	}

	f.fn("sumSquaresNEON", "sumSquares",
		"sumSquaresNEON returns the sum of x[i]*x[i], each square exact in float64 and summed in float64 in eight vector accumulators, the last len(x)%4 squares added to that sum one by one (0 if x is empty). Requires ASIMD.")
	f.op("MOVD x_base+0(FP), R0")
	f.op("MOVD x_len+8(FP), R2")
	f.zero(16, 8)
	f.counted("sumsq_block", "R2", 16, func() {
		f.op("VLD1.P 64(R0), %s", vlist(0, 4))
		for i := 0; i < 4; i++ {
			f.w(fcvtl(4+2*i, i))
			f.w(fcvtl2(5+2*i, i))
		}
		for k := 0; k < 8; k++ {
			f.op("VFMLA V%d.D2, V%d.D2, V%d.D2", 4+k, 4+k, 16+k)
		}
	})
	f.counted("sumsq_single", "R2", 4, func() {
		f.op("VLD1.P 16(R0), %s", vlist(0, 1))
		f.w(fcvtl(4, 0))
		f.w(fcvtl2(5, 0))
		f.op("VFMLA V4.D2, V4.D2, V16.D2")
		f.op("VFMLA V5.D2, V5.D2, V17.D2")
	})
	for w := 1; w < 8; w *= 2 {
		for i := 0; i+w < 8; i += 2 * w {
			f.w(fadd2d(16+i, 16+i, 16+i+w))
		}
	}
	f.w(faddpD(16, 16))
	f.tail("sumsq_tail", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		f.op("FCVTSD F0, F1")
		f.op("FMADDD F1, F16, F1, F16") // F16 = F1*F1 + F16
	})
	f.op("FMOVD F16, ret+24(FP)")
	f.op("RET")
	return f
}

// adamVecs emits the update of nv (1 or 4) vectors at R0 (p), R1 (g), R2
// (m) and R3 (v), advancing the pointers. Registers of vector i: g and
// then p V(i), m V(4+i), v V(8+i), a temporary V(12+i). Each step is
// emitted for every vector before the next, so that their latencies
// overlap.
func (f *file) adamVecs(nv int, decay bool) {
	g, m, v, t := 0, 4, 8, 12
	each := func(fn func(i int)) {
		for i := 0; i < nv; i++ {
			fn(i)
		}
	}
	f.op("VLD1.P %d(R1), %s", 16*nv, vlist(g, nv))
	f.op("VLD1 (R2), %s", vlist(m, nv))
	f.op("VLD1 (R3), %s", vlist(v, nv))
	each(func(i int) { f.w(fmul4s(g+i, g+i, vaScale)) })
	each(func(i int) { f.w(fmul4s(m+i, m+i, vaB1)) })
	each(func(i int) { f.w(fmul4s(t+i, g+i, vaC1)) })
	each(func(i int) { f.w(fadd4s(m+i, m+i, t+i)) }) // mi
	each(func(i int) { f.w(fmul4s(v+i, v+i, vaB2)) })
	each(func(i int) { f.w(fmul4s(t+i, g+i, vaC2)) })
	each(func(i int) { f.w(fmul4s(t+i, t+i, g+i)) })
	each(func(i int) { f.w(fadd4s(v+i, v+i, t+i)) }) // vi
	f.op("VST1.P %s, %d(R2)", vlist(m, nv), 16*nv)
	f.op("VST1.P %s, %d(R3)", vlist(v, nv), 16*nv)
	each(func(i int) { f.w(fmul4s(t+i, v+i, vaIC2)) })
	each(func(i int) { f.w(fsqrt4s(t+i, t+i)) })
	each(func(i int) { f.w(fadd4s(t+i, t+i, vaEps)) }) // denominator
	each(func(i int) { f.w(fmul4s(m+i, m+i, vaIC1)) })
	each(func(i int) { f.w(fdiv4s(m+i, m+i, t+i)) }) // u
	f.op("VLD1 (R0), %s", vlist(g, nv))              // p
	if decay {
		each(func(i int) { f.w(fmul4s(t+i, g+i, vaWd)) })
		each(func(i int) { f.w(fadd4s(m+i, m+i, t+i)) })
	}
	each(func(i int) { f.w(fmul4s(m+i, m+i, vaLR)) })
	each(func(i int) { f.w(fsub4s(g+i, g+i, m+i)) })
	f.op("VST1.P %s, %d(R0)", vlist(g, nv), 16*nv)
}

// adamScalar emits the update of one element, the same operations on
// single floats (F16.. hold the scalars in their lane 0).
func (f *file) adamScalar(decay bool) {
	f.op("FMOVS.P 4(R1), F0")
	f.op("FMOVS (R2), F1")
	f.op("FMOVS (R3), F2")
	f.op("FMULS F%d, F0, F0", vaScale) // g
	f.op("FMULS F%d, F1, F1", vaB1)
	f.op("FMULS F%d, F0, F3", vaC1)
	f.op("FADDS F3, F1, F1") // mi
	f.op("FMULS F%d, F2, F2", vaB2)
	f.op("FMULS F%d, F0, F3", vaC2)
	f.op("FMULS F0, F3, F3")
	f.op("FADDS F3, F2, F2") // vi
	f.op("FMOVS.P F1, 4(R2)")
	f.op("FMOVS.P F2, 4(R3)")
	f.op("FMULS F%d, F2, F3", vaIC2)
	f.op("FSQRTS F3, F3")
	f.op("FADDS F%d, F3, F3", vaEps)
	f.op("FMULS F%d, F1, F1", vaIC1)
	f.op("FDIVS F3, F1, F1") // u = F1/F3
	f.op("FMOVS (R0), F0")
	if decay {
		f.op("FMULS F%d, F0, F3", vaWd)
		f.op("FADDS F3, F1, F1")
	}
	f.op("FMULS F%d, F1, F1", vaLR)
	f.op("FSUBS F1, F0, F0") // p - lr*u
	f.op("FMOVS.P F0, 4(R0)")
}
