//go:build openblas

package peers

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"strings"

	"github.com/simdgpt/simdgpt/bench"
)

// OpenBLASBuilt reports whether this binary was built with -tags openblas.
const OpenBLASBuilt = true

// openBLAS returns OpenBLAS's cblas_sgemm as the peer "openblas". Its
// SetThreads calls openblas_set_num_threads, so that it runs on as many
// threads as simdgpt's Gemm has goroutines.
func openBLAS() []*bench.Impl {
	return []*bench.Impl{{
		Name:       "openblas",
		About:      "OpenBLAS cblas_sgemm: " + strings.TrimSpace(C.GoString(C.openblas_get_config())),
		Peer:       true,
		ISA:        bench.Widest(),
		SetThreads: func(n int) { C.openblas_set_num_threads(C.int(n)) },
		Gemm:       openBLASSgemm,
	}}
}

func openBLASSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	var pa, pb *C.float
	if len(a) > 0 {
		pa = (*C.float)(&a[0])
	}
	if len(b) > 0 {
		pb = (*C.float)(&b[0])
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), pa, C.blasint(lda), pb, C.blasint(ldb), C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}
