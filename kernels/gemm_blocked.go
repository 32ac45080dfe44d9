package kernels

import (
	"runtime"
	"sync"
)

// This file is the GotoBLAS/BLIS-style GEMM driver shared by every SIMD
// implementation. The architecture supplies register-blocked micro-kernels
// (assembly); the driver blocks the problem for the caches, packs B into
// contiguous panels, lays A out so the kernels can stream it, and spreads
// large problems over goroutines.
//
// Loop nest for C (m×n) += op(A) (m×k) · op(B) (k×n):
//
//	for jc in n by nc:                  B block kc×nc lives in L3
//	  for pc in k by kc:                beta applies on the first pc only
//	    pack op(B)[pc:+kc, jc:+nc]      into panels of kc×NR
//	    for ic in m by mc:              A block mc×kc lives in L2
//	      lay out op(A)[ic:+mc, pc:+kc] (copied when that helps)
//	      for jr in nc by NR:           B panel lives in L1
//	        for ir in mc by MR:         micro-kernel on one MR×NR tile

// microKernel is one register-blocked kernel; see asm/gen/gemm.
type microKernel struct {
	mr, nr int
	fn     func(k int, a *float32, rsa, csa int, b *float32, c *float32, ldc int, rows, cols int, alpha, beta float32)
}

// blockedGemm is the GEMM of one SIMD implementation.
type blockedGemm struct {
	wide   microKernel // used for full-width column panels
	narrow microKernel // for the last panel when it fits; same mr, nr = wide.nr/2
	kc     int         // depth of a block
	mc     int         // rows of an A block
	nc     int         // columns of a B block

	// packT, if not nil, packs a transposed block of B into a panel (see
	// amd64.PackBTransAVX2); packB falls back to Go otherwise.
	packT func(dst, src *float32, ldb, w, kc, nr int)
}

// gemmArgs is one GEMM call (or one goroutine's share of it).
type gemmArgs struct {
	transA, transB bool
	m, n, k        int
	alpha          float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	beta           float32
	c              []float32
	ldc            int
}

// gemmWork holds one goroutine's reusable buffers.
type gemmWork struct {
	bpack []float32 // packed B panels
	apack []float32 // copied A block

	// For a parallel call: the strips and their completion.
	parts [maxParts]gemmArgs
	wg    sync.WaitGroup
}

// workPool hands out gemmWorks; it never frees them, so after warm-up no
// call allocates.
var workPool struct {
	sync.Mutex
	free []*gemmWork
}

func getWork() *gemmWork {
	workPool.Lock()
	defer workPool.Unlock()
	if n := len(workPool.free); n > 0 {
		w := workPool.free[n-1]
		workPool.free = workPool.free[:n-1]
		return w
	}
	return new(gemmWork)
}

func putWork(w *gemmWork) {
	workPool.Lock()
	workPool.free = append(workPool.free, w)
	workPool.Unlock()
}

// grow returns s with length n, reusing its storage when large enough.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n, n+n/4)
	}
	return s[:n]
}

// parallelMinFlops is the problem size (2*m*n*k) below which Gemm stays on
// the calling goroutine: smaller problems lose more to synchronisation
// than they gain.
const parallelMinFlops = 1 << 23

// gemm is the ops.gemm entry point: arguments are already checked and m,
// n > 0.
func (g *blockedGemm) gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	args := gemmArgs{transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if workers > 1 && 2*float64(m)*float64(n)*float64(k) >= parallelMinFlops {
		g.parallel(&args, workers)
		return
	}
	w := getWork()
	g.run(w, &args)
	putWork(w)
}

// scaleC sets C = beta*C (C = 0 when beta is 0, without reading C).
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
		} else if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// run computes one GEMM on the calling goroutine with the buffers of w.
func (g *blockedGemm) run(w *gemmWork, p *gemmArgs) {
	m, n, k := p.m, p.n, p.k
	nr := g.wide.nr
	for jc := 0; jc < n; jc += g.nc {
		nc := min(g.nc, n-jc)
		for pc := 0; pc < k; pc += g.kc {
			kc := min(g.kc, k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			panels := (nc + nr - 1) / nr
			w.bpack = grow(w.bpack, panels*nr*kc)
			g.packB(w.bpack, p, pc, kc, jc, nc)
			for ic := 0; ic < m; ic += g.mc {
				mc := min(g.mc, m-ic)
				g.block(w, p, ic, mc, pc, kc, jc, nc, beta)
			}
		}
	}
}

// block multiplies op(A)[ic:ic+mc, pc:pc+kc] by the packed B block into
// C[ic:ic+mc, jc:jc+nc].
func (g *blockedGemm) block(w *gemmWork, p *gemmArgs, ic, mc, pc, kc, jc, nc int, beta float32) {
	mrMax := g.wide.mr
	// Lay out the A block. The micro-kernels read all MR rows of a tile,
	// so the rows past mc must exist: the block is copied, zero padded,
	// when it ends at the matrix's last rows in a partial tile, and also
	// when copying is cheap relative to the work (many column panels) and
	// gives a conflict-free stride.
	var abase []float32
	var rsa, csa int
	mcPad := (mc + mrMax - 1) / mrMax * mrMax
	edge := mcPad != mc && ic+mcPad > p.m
	if edge || nc >= 4*g.wide.nr || p.transA {
		if !p.transA {
			ld := paddedLD(kc)
			w.apack = grow(w.apack, mcPad*ld)
			for i := 0; i < mc; i++ {
				src := p.a[(ic+i)*p.lda+pc:]
				copy(w.apack[i*ld:i*ld+kc], src[:kc])
			}
			clear(w.apack[mc*ld : mcPad*ld])
			abase, rsa, csa = w.apack, ld, 1
		} else {
			ld := paddedLD(mcPad)
			w.apack = grow(w.apack, kc*ld)
			for q := 0; q < kc; q++ {
				src := p.a[(pc+q)*p.lda+ic:]
				row := w.apack[q*ld : q*ld+mcPad]
				copy(row, src[:mc])
				clear(row[mc:])
			}
			abase, rsa, csa = w.apack, 1, ld
		}
	} else {
		// Read A in place: op(A)(i, q) = a[(ic+i)*lda + pc+q].
		abase, rsa, csa = p.a[ic*p.lda+pc:], p.lda, 1
	}

	nr := g.wide.nr
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		kern := &g.wide
		if cols <= g.narrow.nr {
			kern = &g.narrow
		}
		bp := &w.bpack[jr*kc]
		for ir := 0; ir < mc; ir += kern.mr {
			rows := min(kern.mr, mc-ir)
			ci := (ic+ir)*p.ldc + jc + jr
			kern.fn(kc, &abase[ir*rsa], rsa, csa, bp, &p.c[ci], p.ldc, rows, cols, p.alpha, beta)
		}
	}
}

// paddedLD returns a leading dimension of at least n floats whose byte
// stride is not a multiple of 512, so rows do not collide in the cache sets.
func paddedLD(n int) int {
	ld := (n + 15) &^ 15
	if ld%128 == 0 {
		ld += 16
	}
	return ld
}

// packB packs op(B)[pc:pc+kc, jc:jc+nc] into dst as consecutive panels of
// kc rows of nr floats. The last panel is narrower (narrow floats per row)
// when it fits, as the narrow micro-kernel reads it; it is zero padded to
// its width.
func (g *blockedGemm) packB(dst []float32, p *gemmArgs, pc, kc, jc, nc int) {
	wide, narrow := g.wide.nr, g.narrow.nr
	for j0 := 0; j0 < nc; j0 += wide {
		w := min(wide, nc-j0)
		nr := wide
		if w <= narrow {
			nr = narrow
		}
		panel := dst[j0*kc : j0*kc+kc*nr]
		if !p.transB {
			for q := 0; q < kc; q++ {
				src := p.b[(pc+q)*p.ldb+jc+j0:]
				row := panel[q*nr : q*nr+nr]
				copy(row, src[:w])
				if w < nr {
					clear(row[w:])
				}
			}
			continue
		}
		// op(B)(q, j) = b[j*ldb + q]: transpose w rows of B into the panel.
		if g.packT != nil {
			g.packT(&panel[0], &p.b[(jc+j0)*p.ldb+pc], p.ldb, w, kc, nr)
			continue
		}
		if w < nr {
			clear(panel)
		}
		for j := 0; j < w; j++ {
			src := p.b[(jc+j0+j)*p.ldb+pc:]
			src = src[:kc]
			for q, v := range src {
				panel[q*nr+j] = v
			}
		}
	}
}

// parallel splits C into one strip per worker (rows when m >= n, else
// columns, in whole micro-tiles) and runs them concurrently.
func (g *blockedGemm) parallel(p *gemmArgs, workers int) {
	w := getWork()
	defer putWork(w)
	parts := &w.parts
	np := 0
	if p.m >= p.n {
		step := splitStep(p.m, workers, g.wide.mr)
		for i0 := 0; i0 < p.m; i0 += step {
			q := *p
			q.m = min(step, p.m-i0)
			if p.transA {
				q.a = p.a[i0:]
			} else {
				q.a = p.a[i0*p.lda:]
			}
			q.c = p.c[i0*p.ldc:]
			parts[np] = q
			np++
		}
	} else {
		step := splitStep(p.n, workers, g.wide.nr)
		for j0 := 0; j0 < p.n; j0 += step {
			q := *p
			q.n = min(step, p.n-j0)
			if p.transB {
				q.b = p.b[j0*p.ldb:]
			} else {
				q.b = p.b[j0:]
			}
			q.c = p.c[j0:]
			parts[np] = q
			np++
		}
	}
	runParts(g, w, parts[:np])
}

// maxParts bounds the number of strips of one parallel GEMM.
const maxParts = 64

// splitStep returns a strip size, a multiple of unit, that cuts total
// into at most min(workers, maxParts) strips.
func splitStep(total, workers, unit int) int {
	workers = min(workers, maxParts)
	units := (total + unit - 1) / unit
	per := (units + workers - 1) / workers
	return per * unit
}

// gemmTask is one strip handed to a pool goroutine.
type gemmTask struct {
	g    *blockedGemm
	args *gemmArgs
	done *sync.WaitGroup
}

var pool struct {
	sync.Mutex
	tasks   chan gemmTask
	workers int
}

// runParts runs parts[0] on the calling goroutine (with the buffers of w)
// and the rest on pool goroutines, and waits for all of them.
func runParts(g *blockedGemm, w *gemmWork, parts []gemmArgs) {
	ensureWorkers(len(parts) - 1)
	w.wg.Add(len(parts) - 1)
	for i := 1; i < len(parts); i++ {
		pool.tasks <- gemmTask{g, &parts[i], &w.wg}
	}
	g.run(w, &parts[0])
	w.wg.Wait()
	// Drop the references to the caller's slices.
	for i := range parts {
		parts[i] = gemmArgs{}
	}
}

// ensureWorkers starts pool goroutines until at least n exist.
func ensureWorkers(n int) {
	pool.Lock()
	defer pool.Unlock()
	if pool.tasks == nil {
		pool.tasks = make(chan gemmTask, maxParts)
	}
	for pool.workers < n {
		pool.workers++
		go func() {
			w := new(gemmWork)
			for t := range pool.tasks {
				t.g.run(w, t.args)
				t.done.Done()
			}
		}()
	}
}
