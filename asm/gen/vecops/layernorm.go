package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// layerNormRow emits the LayerNorm of one row, the reference loop of
// generic.LayerNormRow in three passes over x:
//
//	mean = sum(x) / n                             (four accumulators)
//	rstd = 1 / sqrt(sum((x-mean)²) / n + eps)     (four accumulators, FMA)
//	y    = gamma * ((x-mean)*rstd) + beta         (FMA)
//
// mean and rstd are computed in float32 (generic takes the square root in
// float64), and the sums are in a different order than generic's, so the
// results agree with generic within a few float32 roundings. The masked
// tail of the second pass zeroes the lanes past n after subtracting the
// mean, so they add nothing.
func layerNormRow(a *isa) {
	name := a.header("layerNormRow", "func(y, x, gamma, beta []float32, eps float32) (mean, rstd float32)",
		"normalises the row x (len(x) >= 1) into y = (x-mean)*rstd*gamma + beta and returns",
		"mean and rstd = 1/sqrt(variance+eps). y, gamma and beta must be at least as long as x;",
		"y may be x (the same slice).")
	// Pass 1: the sum.
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	acc := a.zeros(unroll)
	a.loops(name+"_sum", n, []reg.GPVirtual{x}, func(k int) {
		for j := 0; j < k; j++ {
			VADDPS(a.at(x, j), acc[j], acc[j])
		}
	}, func() {
		t := a.vec()
		a.maskedLoad(a.at(x, 0), t)
		VADDPS(t, acc[1], acc[1])
	})
	Label(name + "_sum_done")
	s := a.reduce(VADDPS, acc)
	nf := XMM()
	cnt := load(Param("x").Len())
	VXORPS(nf, nf, nf)
	VCVTSI2SSQ(cnt, nf, nf)
	mean := XMM()
	VDIVSS(nf, s, mean)
	VMOVSS(mean, addr(ReturnIndex(0)))
	meanv := a.vec()
	VBROADCASTSS(mean, meanv)

	// Pass 2: the sum of squared deviations.
	x = load(Param("x").Base())
	n = load(Param("x").Len())
	acc = a.zeros(unroll)
	a.loops(name+"_var", n, []reg.GPVirtual{x}, func(k int) {
		for j := 0; j < k; j++ {
			t := a.vec()
			VSUBPS(a.at(x, j), meanv, t) // mean - x: the same square
			VFMADD231PS(t, t, acc[j])
		}
	}, func() {
		t := a.vec()
		a.maskedLoad(a.at(x, 0), t)
		if a.avx512() {
			VSUBPS_Z(meanv, t, a.kmask, t)
		} else {
			VSUBPS(meanv, t, t)
			VANDPS(a.ymask, t, t)
		}
		VFMADD231PS(t, t, acc[1])
	})
	Label(name + "_var_done")
	ss := a.reduce(VADDPS, acc)
	v := XMM()
	VDIVSS(nf, ss, v)
	eps := XMM()
	VMOVSS(addr(Param("eps")), eps)
	VADDSS(eps, v, v)
	VSQRTSS(v, v, v)
	one := XMM()
	bits := GP32()
	MOVL(U32(0x3f800000), bits)
	VMOVD(bits, one)
	rstd := XMM()
	VDIVSS(v, one, rstd)
	VMOVSS(rstd, addr(ReturnIndex(1)))
	rstdv := a.vec()
	VBROADCASTSS(rstd, rstdv)

	// Pass 3: the output.
	y := load(Param("y").Base())
	x = load(Param("x").Base())
	g := load(Param("gamma").Base())
	b := load(Param("beta").Base())
	n = load(Param("x").Len())
	a.loops(name+"_out", n, []reg.GPVirtual{y, x, g, b}, func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = a.vec()
			VMOVUPS(a.at(x, j), t[j])
			VSUBPS(meanv, t[j], t[j])
			VMULPS(rstdv, t[j], t[j])
			gv := a.vec()
			VMOVUPS(a.at(g, j), gv)
			VFMADD213PS(a.at(b, j), gv, t[j])
		}
		for j := range t {
			VMOVUPS(t[j], a.at(y, j))
		}
	}, func() {
		t, gv, bv := a.vec(), a.vec(), a.vec()
		a.maskedLoad(a.at(x, 0), t)
		a.maskedLoad(a.at(g, 0), gv)
		a.maskedLoad(a.at(b, 0), bv)
		VSUBPS(meanv, t, t)
		VMULPS(rstdv, t, t)
		VFMADD213PS(bv, gv, t)
		a.maskedStore(t, a.at(y, 0))
	})
	Label(name + "_out_done")
	VZEROUPPER()
	RET()
}

// layerNormBackwardRow emits the backward pass of one row, the reference
// loop of generic.LayerNormBackwardRow, in two passes with xhat =
// (x-mean)*rstd and dn = dy*gamma recomputed in each:
//
//	sd = sum(dn), sdx = sum(dn*xhat), dgamma += dy*xhat, dbeta += dy
//	dx += rstd*(dn - sd/n - xhat*sdx/n)
//
// The masked tail loads zeros past n, so dn there is 0 and adds nothing.
func layerNormBackwardRow(a *isa) {
	name := a.header("layerNormBackwardRow", "func(dx, dy, x, gamma, dgamma, dbeta []float32, mean, rstd float32)",
		"accumulates the LayerNorm gradients of the row x (len(x) >= 1) into dx, dgamma and dbeta",
		"(see generic.LayerNormBackwardRow); every other slice must be at least as long as x.")
	meanv := a.broadcast("mean")
	rstdv := a.broadcast("rstd")

	// Pass 1: the two sums and the parameter gradients.
	dy := load(Param("dy").Base())
	x := load(Param("x").Base())
	g := load(Param("gamma").Base())
	dg := load(Param("dgamma").Base())
	db := load(Param("dbeta").Base())
	n := load(Param("x").Len())
	sd := a.zeros(2)
	sdx := a.zeros(2)
	// step handles one vector: xv, dyv, gv hold x, dy and gamma; dgv, dbv
	// the parameter gradients, updated in registers.
	step := func(j int, xv, dyv, gv, dgv, dbv reg.VecVirtual) {
		VSUBPS(meanv, xv, xv)
		VMULPS(rstdv, xv, xv) // xhat
		VFMADD231PS(xv, dyv, dgv)
		VADDPS(dyv, dbv, dbv)
		VMULPS(gv, dyv, gv) // dn
		VADDPS(gv, sd[j%2], sd[j%2])
		VFMADD231PS(xv, gv, sdx[j%2])
	}
	a.loops(name+"_sums", n, []reg.GPVirtual{dy, x, g, dg, db}, func(k int) {
		for j := 0; j < k; j++ {
			xv, dyv, gv, dgv, dbv := a.vec(), a.vec(), a.vec(), a.vec(), a.vec()
			VMOVUPS(a.at(x, j), xv)
			VMOVUPS(a.at(dy, j), dyv)
			VMOVUPS(a.at(g, j), gv)
			VMOVUPS(a.at(dg, j), dgv)
			VMOVUPS(a.at(db, j), dbv)
			step(j, xv, dyv, gv, dgv, dbv)
			VMOVUPS(dgv, a.at(dg, j))
			VMOVUPS(dbv, a.at(db, j))
		}
	}, func() {
		xv, dyv, gv, dgv, dbv := a.vec(), a.vec(), a.vec(), a.vec(), a.vec()
		a.maskedLoad(a.at(x, 0), xv)
		a.maskedLoad(a.at(dy, 0), dyv)
		a.maskedLoad(a.at(g, 0), gv)
		a.maskedLoad(a.at(dg, 0), dgv)
		a.maskedLoad(a.at(db, 0), dbv)
		step(0, xv, dyv, gv, dgv, dbv)
		a.maskedStore(dgv, a.at(dg, 0))
		a.maskedStore(dbv, a.at(db, 0))
	})
	Label(name + "_sums_done")
	s1 := a.reduce(VADDPS, sd)
	s2 := a.reduce(VADDPS, sdx)
	nf := XMM()
	VXORPS(nf, nf, nf)
	VCVTSI2SSQ(load(Param("x").Len()), nf, nf)
	VDIVSS(nf, s1, s1)
	VDIVSS(nf, s2, s2)
	sdv, sdxv := a.vec(), a.vec()
	VBROADCASTSS(s1, sdv)
	VBROADCASTSS(s2, sdxv)

	// Pass 2: dx.
	dx := load(Param("dx").Base())
	dy = load(Param("dy").Base())
	x = load(Param("x").Base())
	g = load(Param("gamma").Base())
	n = load(Param("x").Len())
	// grad turns xv (x) and dn (dy*gamma) into the increment of dx.
	grad := func(xv, dn reg.VecVirtual) {
		VSUBPS(meanv, xv, xv)
		VMULPS(rstdv, xv, xv)      // xhat
		VSUBPS(sdv, dn, dn)        // dn - sd/n
		VFNMADD231PS(xv, sdxv, dn) // - xhat*sdx/n
		VMULPS(rstdv, dn, dn)
	}
	a.loops(name+"_dx", n, []reg.GPVirtual{dx, dy, x, g}, func(k int) {
		for j := 0; j < k; j++ {
			xv, dn := a.vec(), a.vec()
			VMOVUPS(a.at(x, j), xv)
			VMOVUPS(a.at(dy, j), dn)
			VMULPS(a.at(g, j), dn, dn)
			grad(xv, dn)
			VADDPS(a.at(dx, j), dn, dn)
			VMOVUPS(dn, a.at(dx, j))
		}
	}, func() {
		xv, dn, gv, dxv := a.vec(), a.vec(), a.vec(), a.vec()
		a.maskedLoad(a.at(x, 0), xv)
		a.maskedLoad(a.at(dy, 0), dn)
		a.maskedLoad(a.at(g, 0), gv)
		a.maskedLoad(a.at(dx, 0), dxv)
		VMULPS(gv, dn, dn)
		grad(xv, dn)
		VADDPS(dxv, dn, dn)
		a.maskedStore(dn, a.at(dx, 0))
	})
	Label(name + "_dx_done")
	VZEROUPPER()
	RET()
}
