package simdblas

// Panic messages, the same strings as gonum.org/v1/gonum/blas/gonum's
// (its errors.go) so that a program panics identically with either
// implementation. Only those of the routines this package overrides.
const (
	zeroIncX = "blas: zero x index increment"
	zeroIncY = "blas: zero y index increment"

	mLT0 = "blas: m < 0"
	nLT0 = "blas: n < 0"
	kLT0 = "blas: k < 0"

	badTranspose = "blas: illegal transpose"

	badLdA = "blas: bad leading dimension of A"
	badLdB = "blas: bad leading dimension of B"
	badLdC = "blas: bad leading dimension of C"

	shortX = "blas: insufficient length of x"
	shortY = "blas: insufficient length of y"
	shortA = "blas: insufficient length of a"
	shortB = "blas: insufficient length of b"
	shortC = "blas: insufficient length of c"
)
