// Package peers holds the other libraries kernelbench measures simdgpt's
// GEMM against, as bench.Impls: gonum's pure-Go Sgemm always, and
// OpenBLAS's cblas_sgemm (through cgo) when built with -tags openblas
// (Debian package libopenblas-dev).
package peers

import (
	"runtime/debug"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/bench"
)

// All returns every peer compiled into this binary: gonum, then openblas
// when built with -tags openblas.
func All() []*bench.Impl {
	return append([]*bench.Impl{Gonum()}, openBLAS()...)
}

// Gonum returns gonum's pure-Go Sgemm (gonum.org/v1/gonum/blas/gonum) as
// the peer "gonum". It runs on GOMAXPROCS goroutines for large problems,
// as simdgpt's Gemm does.
func Gonum() *bench.Impl {
	var impl gonum.Implementation
	return &bench.Impl{
		Name:  "gonum",
		About: "gonum.org/v1/gonum " + moduleVersion("gonum.org/v1/gonum") + " blas/gonum Sgemm (pure Go)",
		Peer:  true,
		ISA:   bench.Widest(),
		Gemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		},
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// moduleVersion returns the version of module path this binary was built
// with, or "(version unknown)".
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "(version unknown)"
}
