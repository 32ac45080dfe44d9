// Command layernorm generates the LayerNorm row kernels, forward and
// backward, for AVX2+FMA (YMM registers, VMASKMOVPS tails) and AVX-512F (ZMM
// registers, opmask tails), into layernorm_amd64.s. Each pass over a row is
// a loop over four vectors (four accumulators for the sums), a loop over
// single vectors and one masked step for the last lanes-1 or fewer
// elements: no scalar loop, and nothing outside the slices is touched.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/simdgpt/simdgpt/asm/gen/internal/x86"
)

// unroll is the number of vectors of a block, and the number of
// accumulators of the sums.
const unroll = 4

// masks are the tail masks (the form: table address, then index).
var masks *x86.Masks

func main() {
	ConstraintExpr("amd64,!purego")
	masks = x86.NewMasks("layernormMaskAVX2", "layernormMaskAVX512", x86.MaskForm{})
	for _, s := range x86.Both {
		layerNormRow(s)
		layerNormBackwardRow(s)
	}
	x86.Finish()
}

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
func layerNormRow(s *x86.ISA) {
	name := s.Header("layerNormRow",
		"normalises the row x (len(x) >= 1) into y = (x-mean)*rstd*gamma + beta and returns",
		"mean and rstd = 1/sqrt(variance+eps). y, gamma and beta must be at least as long as x;",
		"y may be x (the same slice).")
	meanv, nf := meanPass(s, name)
	rstdv := rstdPass(s, name, meanv, nf)
	normPass(s, name, meanv, rstdv)
	VZEROUPPER()
	RET()
}

// meanPass emits pass 1 of layerNormRow: it stores the mean as result 0
// and returns it in every lane of a vector, and n as a float32 (lane 0).
func meanPass(s *x86.ISA, name string) (meanv reg.VecVirtual, nf reg.VecVirtual) {
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	acc := s.Zeros(unroll)
	s.Loops(name+"_sum", n, []reg.GPVirtual{x}, unroll, masks, x86.Split(func(k int) {
		for j := 0; j < k; j++ {
			VADDPS(s.At(x, j), acc[j], acc[j])
		}
	}, func(tl *x86.Tail) {
		t := s.Vec()
		s.LoadTo(s.At(x, 0), tl, t)
		VADDPS(t, acc[1], acc[1])
	}))
	Label(name + "_sum_done")
	total := s.ReduceLow(VADDPS, acc)
	nf = XMM()
	cnt := x86.LoadGP(Param("x").Len())
	VXORPS(nf, nf, nf)
	VCVTSI2SSQ(cnt, nf, nf)
	mean := XMM()
	VDIVSS(nf, total, mean)
	VMOVSS(mean, x86.Ret(0))
	meanv = s.Vec()
	VBROADCASTSS(mean, meanv)
	return meanv, nf
}

// rstdPass emits pass 2 of layerNormRow, the sum of squared deviations:
// it stores rstd as result 1 and returns it in every lane of a vector.
func rstdPass(s *x86.ISA, name string, meanv, nf reg.VecVirtual) reg.VecVirtual {
	x := x86.LoadGP(Param("x").Base())
	n := x86.LoadGP(Param("x").Len())
	acc := s.Zeros(unroll)
	s.Loops(name+"_var", n, []reg.GPVirtual{x}, unroll, masks, x86.Split(func(k int) {
		for j := 0; j < k; j++ {
			t := s.Vec()
			VSUBPS(s.At(x, j), meanv, t) // mean - x: the same square
			VFMADD231PS(t, t, acc[j])
		}
	}, func(tl *x86.Tail) {
		t := s.Vec()
		s.LoadTo(s.At(x, 0), tl, t)
		if s.Is512() {
			VSUBPS_Z(meanv, t, tl.K, t)
		} else {
			VSUBPS(meanv, t, t)
			VANDPS(tl.Y, t, t)
		}
		VFMADD231PS(t, t, acc[1])
	}))
	Label(name + "_var_done")
	ss := s.ReduceLow(VADDPS, acc)
	v := XMM()
	VDIVSS(nf, ss, v)
	eps := XMM()
	VMOVSS(x86.Addr(Param("eps")), eps)
	VADDSS(eps, v, v)
	VSQRTSS(v, v, v)
	one := XMM()
	bits := GP32()
	MOVL(U32(0x3f800000), bits)
	VMOVD(bits, one)
	rstd := XMM()
	VDIVSS(v, one, rstd)
	VMOVSS(rstd, x86.Ret(1))
	rstdv := s.Vec()
	VBROADCASTSS(rstd, rstdv)
	return rstdv
}

// normPass emits pass 3 of layerNormRow: y = gamma*((x-mean)*rstd) + beta.
func normPass(s *x86.ISA, name string, meanv, rstdv reg.VecVirtual) {
	y := x86.LoadGP(Param("y").Base())
	x := x86.LoadGP(Param("x").Base())
	g := x86.LoadGP(Param("gamma").Base())
	b := x86.LoadGP(Param("beta").Base())
	n := x86.LoadGP(Param("x").Len())
	s.Loops(name+"_out", n, []reg.GPVirtual{y, x, g, b}, unroll, masks, x86.Split(func(k int) {
		t := make([]reg.VecVirtual, k)
		for j := range t {
			t[j] = s.Vec()
			VMOVUPS(s.At(x, j), t[j])
			VSUBPS(meanv, t[j], t[j])
			VMULPS(rstdv, t[j], t[j])
			gv := s.Vec()
			VMOVUPS(s.At(g, j), gv)
			VFMADD213PS(s.At(b, j), gv, t[j])
		}
		for j := range t {
			VMOVUPS(t[j], s.At(y, j))
		}
	}, func(tl *x86.Tail) {
		t, gv, bv := s.Vec(), s.Vec(), s.Vec()
		s.LoadTo(s.At(x, 0), tl, t)
		s.LoadTo(s.At(g, 0), tl, gv)
		s.LoadTo(s.At(b, 0), tl, bv)
		VSUBPS(meanv, t, t)
		VMULPS(rstdv, t, t)
		VFMADD213PS(bv, gv, t)
		s.Store(t, s.At(y, 0), tl)
	}))
	Label(name + "_out_done")
}

// layerNormBackwardRow emits the backward pass of one row, the reference
// loop of generic.LayerNormBackwardRow, in two passes with xhat =
// (x-mean)*rstd and dn = dy*gamma recomputed in each:
//
//	sd = sum(dn), sdx = sum(dn*xhat), dgamma += dy*xhat, dbeta += dy
//	dx += rstd*(dn - sd/n - xhat*sdx/n)
//
// The masked tail loads zeros past n, so dn there is 0 and adds nothing.
func layerNormBackwardRow(s *x86.ISA) {
	name := s.Header("layerNormBackwardRow",
		"accumulates the LayerNorm gradients of the row x (len(x) >= 1) into dx, dgamma and dbeta",
		"(see generic.LayerNormBackwardRow); every other slice must be at least as long as x.")
	meanv := s.Broadcast("mean")
	rstdv := s.Broadcast("rstd")
	sdv, sdxv := gradSums(s, name, meanv, rstdv)
	dxPass(s, name, meanv, rstdv, sdv, sdxv)
	VZEROUPPER()
	RET()
}

// gradSums emits pass 1 of layerNormBackwardRow: it adds the parameter
// gradients into dgamma and dbeta and returns sd/n and sdx/n in every lane
// of a vector each.
func gradSums(s *x86.ISA, name string, meanv, rstdv reg.VecVirtual) (sdv, sdxv reg.VecVirtual) {
	dy := x86.LoadGP(Param("dy").Base())
	x := x86.LoadGP(Param("x").Base())
	g := x86.LoadGP(Param("gamma").Base())
	dg := x86.LoadGP(Param("dgamma").Base())
	db := x86.LoadGP(Param("dbeta").Base())
	n := x86.LoadGP(Param("x").Len())
	sd := s.Zeros(2)
	sdx := s.Zeros(2)
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
	s.Loops(name+"_sums", n, []reg.GPVirtual{dy, x, g, dg, db}, unroll, masks, x86.Split(func(k int) {
		for j := 0; j < k; j++ {
			xv, dyv, gv, dgv, dbv := s.Vec(), s.Vec(), s.Vec(), s.Vec(), s.Vec()
			VMOVUPS(s.At(x, j), xv)
			VMOVUPS(s.At(dy, j), dyv)
			VMOVUPS(s.At(g, j), gv)
			VMOVUPS(s.At(dg, j), dgv)
			VMOVUPS(s.At(db, j), dbv)
			step(j, xv, dyv, gv, dgv, dbv)
			VMOVUPS(dgv, s.At(dg, j))
			VMOVUPS(dbv, s.At(db, j))
		}
	}, func(tl *x86.Tail) {
		xv, dyv, gv, dgv, dbv := s.Vec(), s.Vec(), s.Vec(), s.Vec(), s.Vec()
		s.LoadTo(s.At(x, 0), tl, xv)
		s.LoadTo(s.At(dy, 0), tl, dyv)
		s.LoadTo(s.At(g, 0), tl, gv)
		s.LoadTo(s.At(dg, 0), tl, dgv)
		s.LoadTo(s.At(db, 0), tl, dbv)
		step(0, xv, dyv, gv, dgv, dbv)
		s.Store(dgv, s.At(dg, 0), tl)
		s.Store(dbv, s.At(db, 0), tl)
	}))
	Label(name + "_sums_done")
	s1 := s.ReduceLow(VADDPS, sd)
	s2 := s.ReduceLow(VADDPS, sdx)
	nf := XMM()
	VXORPS(nf, nf, nf)
	VCVTSI2SSQ(x86.LoadGP(Param("x").Len()), nf, nf)
	VDIVSS(nf, s1, s1)
	VDIVSS(nf, s2, s2)
	sdv, sdxv = s.Vec(), s.Vec()
	VBROADCASTSS(s1, sdv)
	VBROADCASTSS(s2, sdxv)
	return sdv, sdxv
}

// dxPass emits pass 2 of layerNormBackwardRow: dx += rstd*(dn - sd/n -
// xhat*sdx/n).
func dxPass(s *x86.ISA, name string, meanv, rstdv, sdv, sdxv reg.VecVirtual) {
	dx := x86.LoadGP(Param("dx").Base())
	dy := x86.LoadGP(Param("dy").Base())
	x := x86.LoadGP(Param("x").Base())
	g := x86.LoadGP(Param("gamma").Base())
	n := x86.LoadGP(Param("x").Len())
	// grad turns xv (x) and dn (dy*gamma) into the increment of dx.
	grad := func(xv, dn reg.VecVirtual) {
		VSUBPS(meanv, xv, xv)
		VMULPS(rstdv, xv, xv)      // xhat
		VSUBPS(sdv, dn, dn)        // dn - sd/n
		VFNMADD231PS(xv, sdxv, dn) // - xhat*sdx/n
		VMULPS(rstdv, dn, dn)
	}
	s.Loops(name+"_dx", n, []reg.GPVirtual{dx, dy, x, g}, unroll, masks, x86.Split(func(k int) {
		for j := 0; j < k; j++ {
			xv, dn := s.Vec(), s.Vec()
			VMOVUPS(s.At(x, j), xv)
			VMOVUPS(s.At(dy, j), dn)
			VMULPS(s.At(g, j), dn, dn)
			grad(xv, dn)
			VADDPS(s.At(dx, j), dn, dn)
			VMOVUPS(dn, s.At(dx, j))
		}
	}, func(tl *x86.Tail) {
		xv, dn, gv, dxv := s.Vec(), s.Vec(), s.Vec(), s.Vec()
		s.LoadTo(s.At(x, 0), tl, xv)
		s.LoadTo(s.At(dy, 0), tl, dn)
		s.LoadTo(s.At(g, 0), tl, gv)
		s.LoadTo(s.At(dx, 0), tl, dxv)
		VMULPS(gv, dn, dn)
		grad(xv, dn)
		VADDPS(dxv, dn, dn)
		s.Store(dn, s.At(dx, 0), tl)
	}))
	Label(name + "_dx_done")
}
