package gemm

import "math"

// negInfRow is a run of -Inf copied over masked parts of score rows.
var negInfRow = func() []float32 {
	s := make([]float32, 1024)
	for i := range s {
		s[i] = float32(math.Inf(-1))
	}
	return s
}()

// fillNegInf sets every element of s to -Inf.
func fillNegInf(s []float32) {
	for len(s) > 0 {
		n := copy(s, negInfRow)
		s = s[n:]
	}
}

// MaskedScores is the kernel set's MaskedScores: the arguments are
// checked and tq, tk > 0 (see kernelset.Set). It is GEMM with op(B) = Kᵀ that
// visits, for each MR-row strip of queries, only the column panels that
// hold at least one visible key, and writes -Inf over the rest.
func (g *Driver) MaskedScores(tq, tk, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int) {
	// Query i sees keys j < i+offset+1; the last query sees the most.
	visAll := min(tk, max(0, tq-1+offset+1))
	if visAll > 0 && d == 0 {
		for i := 0; i < tq; i++ {
			clear(s[i*lds : i*lds+min(tk, max(0, i+offset+1))])
		}
	}
	if visAll > 0 && d > 0 {
		w := getWork()
		g.scoreStrips(w, tq, d, scale, q, ldq, k, ldk, offset, s, lds, visAll)
		putWork(w)
	}
	// Mask: everything right of the diagonal (including computed tile
	// corners) becomes -Inf.
	for i := 0; i < tq; i++ {
		from := min(tk, max(0, i+offset+1))
		fillNegInf(s[i*lds+from : i*lds+tk])
	}
}

// scoreStrips computes the visible tiles of S = scale·Q·Kᵀ, blocking d
// by kc.
func (g *Driver) scoreStrips(w *gemmWork, tq, d int, scale float32, q []float32, ldq int, k []float32, ldk int, offset int, s []float32, lds int, visAll int) {
	args := gemmArgs{transB: true, b: k, ldb: ldk}
	mr := g.Wide.MR // both kernels share MR here (checked in init)
	nr := g.Wide.NR
	for pc := 0; pc < d; pc += g.kc {
		kc := min(g.kc, d-pc)
		beta := float32(0)
		if pc > 0 {
			beta = 1
		}
		panels := (visAll + nr - 1) / nr
		w.bpack = grow(w.bpack, panels*nr*kc)
		g.packB(w.bpack, &args, pc, kc, 0, visAll)
		for i0 := 0; i0 < tq; i0 += mr {
			rows := min(mr, tq-i0)
			vis := min(visAll, max(0, i0+rows-1+offset+1)) // columns any row of the strip sees
			if vis == 0 {
				continue
			}
			// The strided kernels read all MR rows of Q, so a partial last
			// strip is packed (zero padded) and takes the packed kernels;
			// so is every strip when the ISA has no strided kernel.
			packed := rows < mr || g.Wide.Strided == nil
			if packed {
				ps := g.PanelStride
				w.apack = grow(w.apack, kc*ps)
				g.packTrans(w.apack, q[i0*ldq+pc:], ldq, rows, kc, ps)
			}
			for jr := 0; jr < vis; jr += nr {
				cols := min(nr, vis-jr)
				kern := &g.Wide
				if min(nr, visAll-jr) <= g.Narrow.NR {
					kern = &g.Narrow
				}
				if packed {
					kern.packedFor(rows)(kc, &w.apack[0], 0, 0, &w.bpack[jr*kc], kern.NR, &s[i0*lds+jr], lds, rows, cols, scale, beta)
				} else {
					kern.Strided(kc, &q[i0*ldq+pc], ldq, 1, &w.bpack[jr*kc], kern.NR, &s[i0*lds+jr], lds, rows, cols, scale, beta)
				}
			}
		}
	}
}
