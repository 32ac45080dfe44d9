// Package peers holds the other libraries kernelbench measures simdgpt's
// GEMM against, as bench.Impls: gonum's pure-Go Sgemm and gonum's
// blas.Float32 interface served by simdgpt (kernels/simdblas) always, and
// OpenBLAS's cblas_sgemm (through cgo) when built with -tags openblas
// (Debian package libopenblas-dev): the kernels OpenBLAS picks for this
// CPU, and on amd64 its AVX2 kernels too (see OpenBLASAVX2Core).
package peers

import (
	"runtime/debug"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/simdblas"
)

// All returns every peer compiled into this binary: gonum and
// gonum+simdblas, then, when built with -tags openblas, openblas and
// (when this CPU runs simdgpt's avx2 implementation) openblas-avx2.
func All() []*bench.Impl {
	return append([]*bench.Impl{Gonum(), SimdBLAS()}, openBLAS()...)
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
		KernelFuncs: bench.KernelFuncs{
			Gemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
				impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			},
		},
	}
}

// SimdBLAS returns gonum's blas.Float32 interface served by simdgpt's
// kernels/simdblas as the peer "gonum+simdblas": its Sgemm is
// simdblas.Implementation{}.Sgemm called through the interface, which is
// what a gonum program gets after blas32.Use(simdblas.Implementation{}):
// gonum's argument checks, then kernels.Gemm on kernels.Default() (the
// widest implementation this CPU runs, or the one SIMDGPT_ISA names).
// Next to the gonum row it shows what that one line buys; next to the
// row of simdgpt's default implementation, what the interface costs.
func SimdBLAS() *bench.Impl {
	var impl blas.Float32 = simdblas.Implementation{}
	// The peak yardstick and the size limit of the implementation it runs
	// on (for generic, in a purego build: the widest ISA, and no calls of
	// seconds).
	own := bench.Ours(kernels.Default())
	return &bench.Impl{
		Name:     "gonum+simdblas",
		About:    "gonum's blas.Float32 served by github.com/simdgpt/simdgpt/kernels/simdblas (blas32.Use(simdblas.Implementation{})): Sgemm on simdgpt " + own.Name,
		Peer:     true,
		ISA:      own.ISA,
		MaxFlops: own.MaxFlops,
		KernelFuncs: bench.KernelFuncs{
			Gemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
				impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			},
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
