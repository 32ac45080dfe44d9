//go:build openblas

package peers

/*
#cgo LDFLAGS: -lopenblas -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>

// The second OpenBLAS instance (see loadOpenBLASCopy): its functions,
// looked up in the copy of the library; NULL until it is loaded.
static __typeof__(cblas_sgemm) *copy_sgemm;
static __typeof__(cblas_sgemv) *copy_sgemv;
static __typeof__(openblas_set_num_threads) *copy_set_num_threads;
static __typeof__(openblas_get_config) *copy_get_config;
static char *(*copy_get_corename)(void);

// ob_corename returns the core the process's OpenBLAS runs
// (openblas_get_corename, looked up so that versions without it still
// build), or NULL.
static const char *ob_corename(void) {
	char *(*f)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
	return f ? f() : NULL;
}

static const char *ob_copy_corename(void) {
	return copy_get_corename ? copy_get_corename() : NULL;
}

// ob_path returns the file of the OpenBLAS the process loaded, or NULL.
// It asks the dynamic loader where openblas_get_config is defined (the
// Go program calls it but never takes its address, which would make the
// executable define it).
static const char *ob_path(void) {
	Dl_info info;
	void *f = dlsym(RTLD_DEFAULT, "openblas_get_config");
	if (f == NULL || dladdr(f, &info) == 0 || info.dli_fname == NULL || info.dli_fname[0] == 0) {
		return NULL;
	}
	return info.dli_fname;
}

// ob_load_copy loads the library file at path (a copy of the process's
// OpenBLAS: the loader keeps one instance per file) with
// OPENBLAS_CORETYPE=core, which OpenBLAS reads when it loads, and
// restores the variable. RTLD_DEEPBIND makes the copy's references to
// its own global symbols (the table of kernels it chose, among others)
// bind to its own definitions rather than to those of the instance
// already loaded. It returns NULL, or an error message.
static const char *ob_load_copy(const char *path, const char *core) {
#ifndef RTLD_DEEPBIND
	return "this system's dynamic loader has no RTLD_DEEPBIND";
#else
	const char *old = getenv("OPENBLAS_CORETYPE");
	char *saved = old ? strdup(old) : NULL;
	setenv("OPENBLAS_CORETYPE", core, 1);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (saved) {
		setenv("OPENBLAS_CORETYPE", saved, 1);
		free(saved);
	} else {
		unsetenv("OPENBLAS_CORETYPE");
	}
	if (h == NULL) {
		const char *e = dlerror();
		return e ? e : "dlopen failed";
	}
	copy_sgemm = (__typeof__(cblas_sgemm) *)dlsym(h, "cblas_sgemm");
	copy_sgemv = (__typeof__(cblas_sgemv) *)dlsym(h, "cblas_sgemv");
	copy_set_num_threads = (__typeof__(openblas_set_num_threads) *)dlsym(h, "openblas_set_num_threads");
	copy_get_config = (__typeof__(openblas_get_config) *)dlsym(h, "openblas_get_config");
	copy_get_corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
	if (copy_sgemm == NULL || copy_sgemv == NULL || copy_set_num_threads == NULL || copy_get_config == NULL) {
		copy_sgemm = NULL;
		copy_sgemv = NULL;
		return "the copy lacks cblas_sgemm, cblas_sgemv, openblas_set_num_threads or openblas_get_config";
	}
	return NULL;
#endif
}

static void ob_copy_set_threads(int n) { copy_set_num_threads(n); }
static char *ob_copy_config(void) { return copy_get_config(); }

static void ob_sgemm(int inst, int ta, int tb, blasint m, blasint n, blasint k, float alpha,
		const float *a, blasint lda, const float *b, blasint ldb, float beta, float *c, blasint ldc) {
	(inst ? copy_sgemm : cblas_sgemm)(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void ob_sgemv(int inst, int ta, blasint m, blasint n, float alpha,
		const float *a, blasint lda, const float *x, float beta, float *y) {
	(inst ? copy_sgemv : cblas_sgemv)(CblasRowMajor, ta, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// OpenBLASBuilt reports whether this binary was built with -tags openblas.
const OpenBLASBuilt = true

// coreTypeEnv is the environment variable OpenBLAS reads, when it loads,
// to take the kernels of the named core instead of detecting the CPU.
const coreTypeEnv = "OPENBLAS_CORETYPE"

// openBLAS returns OpenBLAS's cblas_sgemm and cblas_sgemv (Gemm and Gemv)
// as the peer "openblas" (the
// kernels OpenBLAS picks for this CPU, or those OPENBLAS_CORETYPE in the
// environment names) and, when simdgpt's avx2 implementation runs here,
// as the peer "openblas-avx2": a second instance of the library, loaded
// with OPENBLAS_CORETYPE=OpenBLASAVX2Core(). Their SetThreads call
// openblas_set_num_threads, so that they run on as many threads as
// simdgpt's Gemm has goroutines. The second instance is loaded once per
// process, on the first call; when it cannot be, the "openblas" peer's
// About says why and there is no "openblas-avx2".
func openBLAS() []*bench.Impl {
	about := "OpenBLAS cblas_sgemm and cblas_sgemv with the kernels it picks for this CPU: " + describe(coreName(0), C.GoString(C.openblas_get_config()))
	if v, ok := os.LookupEnv(coreTypeEnv); ok {
		about += fmt.Sprintf(" (%s=%s is set in the environment)", coreTypeEnv, v)
	}
	def := &bench.Impl{
		Name:       "openblas",
		About:      about,
		Peer:       true,
		ISA:        bench.Widest(),
		SetThreads: func(n int) { setThreads(0, n) },
		KernelFuncs: bench.KernelFuncs{
			Gemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
				sgemm(0, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			},
			Gemv: func(trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32) {
				sgemv(0, trans, m, n, alpha, a, lda, x, beta, y)
			},
		},
	}
	avx2, err := kernels.Lookup("avx2")
	if err != nil {
		return []*bench.Impl{def} // nothing of ours to hold its AVX2 kernels against
	}
	core := OpenBLASAVX2Core()
	desc, err := loadCopy()
	if err != nil {
		def.About += fmt.Sprintf("; no openblas-avx2 peer: %v", err)
		return []*bench.Impl{def}
	}
	return []*bench.Impl{def, {
		Name:       "openblas-avx2",
		About:      fmt.Sprintf("OpenBLAS cblas_sgemm and cblas_sgemv with its AVX2 kernels: a second instance of the library, loaded with %s=%s: %s", coreTypeEnv, core, desc),
		Peer:       true,
		ISA:        avx2,
		SetThreads: func(n int) { setThreads(1, n) },
		KernelFuncs: bench.KernelFuncs{
			Gemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
				sgemm(1, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			},
			Gemv: func(trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32) {
				sgemv(1, trans, m, n, alpha, a, lda, x, beta, y)
			},
		},
	}}
}

// OpenBLASAVX2Core returns the value of OPENBLAS_CORETYPE that selects
// OpenBLAS's AVX2 kernels on this CPU: "Zen" on AMD processors, "Haswell"
// on others (both are OpenBLAS's AVX2+FMA kernels; the names choose the
// blocking tuned for the vendor).
func OpenBLASAVX2Core() string {
	if kernels.CPU().Vendor == "AMD" {
		return "Zen"
	}
	return "Haswell"
}

// describe formats what an OpenBLAS instance runs: "core NAME; CONFIG".
func describe(core, config string) string {
	if core == "" {
		core = "unknown (no openblas_get_corename)"
	}
	return "core " + core + "; " + strings.TrimSpace(config)
}

// loadCopy loads the second OpenBLAS instance, once per process, and
// returns describe of it.
var loadCopy = sync.OnceValues(func() (string, error) {
	core := OpenBLASAVX2Core()
	p := C.ob_path()
	if p == nil {
		return "", errors.New("cannot find the file of the loaded OpenBLAS (dladdr)")
	}
	path := C.GoString(p)
	// The dynamic loader loads a file once (it recognises links to it by
	// device and inode): a second instance needs a copy. The copy is
	// removed once loaded; its mapping stays.
	tmp, err := copyToTemp(path)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	ctmp, ccore := C.CString(tmp), C.CString(core)
	defer C.free(unsafe.Pointer(ctmp))
	defer C.free(unsafe.Pointer(ccore))
	if e := C.ob_load_copy(ctmp, ccore); e != nil {
		return "", fmt.Errorf("loading a copy of %s: %s", path, C.GoString(e))
	}
	got := coreName(1)
	config := C.GoString(C.ob_copy_config())
	// A build without DYNAMIC_ARCH ignores OPENBLAS_CORETYPE, and an
	// unknown name falls back to detection: the copy must name the core
	// asked for.
	if got != core && (got != "" || !strings.Contains(config, core)) {
		return "", fmt.Errorf("%s=%s gave OpenBLAS core %q (%s), not %s", coreTypeEnv, core, got, strings.TrimSpace(config), core)
	}
	return describe(got, config), nil
})

// copyToTemp copies the file at path to a new temporary file and returns
// its name.
func copyToTemp(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "simdgpt-openblas-*.so")
	if err != nil {
		return "", fmt.Errorf("copying OpenBLAS: %v", err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copying %s: %v", path, err)
	}
	return dst.Name(), nil
}

// setThreads sets the number of threads of OpenBLAS instance inst: 0 for
// the process's, 1 for the second one (loaded).
func setThreads(inst, n int) {
	if inst == 0 {
		C.openblas_set_num_threads(C.int(n))
	} else {
		C.ob_copy_set_threads(C.int(n))
	}
}

// coreName returns the core whose kernels OpenBLAS instance inst runs
// (openblas_get_corename), or "" if this OpenBLAS does not say.
func coreName(inst int) string {
	if inst == 0 {
		return C.GoString(C.ob_corename())
	}
	return C.GoString(C.ob_copy_corename())
}

// sgemm calls cblas_sgemm of the process's OpenBLAS (inst 0) or of the
// second instance (inst 1) on row-major matrices.
func sgemm(inst int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := C.int(C.CblasNoTrans), C.int(C.CblasNoTrans)
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
	C.ob_sgemm(C.int(inst), ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), pa, C.blasint(lda), pb, C.blasint(ldb), C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}

// sgemv calls cblas_sgemv of the process's OpenBLAS (inst 0) or of the
// second instance (inst 1): y = alpha*op(A)*x + beta*y for the row-major
// m×n A, x and y of unit stride, as kernels.Gemv.
func sgemv(inst int, trans bool, m, n int, alpha float32, a []float32, lda int, x []float32, beta float32, y []float32) {
	xlen, ylen := n, m
	if trans {
		xlen, ylen = m, n
	}
	if ylen == 0 {
		return
	}
	ta := C.int(C.CblasNoTrans)
	if trans {
		ta = C.CblasTrans
	}
	var pa, px *C.float
	if len(a) > 0 && xlen > 0 {
		pa = (*C.float)(&a[0])
	}
	if len(x) > 0 && xlen > 0 {
		px = (*C.float)(&x[0])
	}
	C.ob_sgemv(C.int(inst), ta, C.blasint(m), C.blasint(n), C.float(alpha), pa, C.blasint(max(lda, 1)), px, C.float(beta), (*C.float)(&y[0]))
}
