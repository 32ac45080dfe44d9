package simdblas_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/simdblas"
)

// A gonum program that multiplies float32 matrices through blas32 runs
// on simdgpt's kernels after one call of blas32.Use; nothing else in it
// changes.
func Example() {
	blas32.Use(simdblas.Implementation{})
	defer blas32.Use(gonum.Implementation{}) // only to leave other examples as they were

	// A is 2×3 and B is 3×2, row-major; C = A·B.
	a := blas32.General{Rows: 2, Cols: 3, Stride: 3, Data: []float32{
		1, 2, 3,
		4, 5, 6,
	}}
	b := blas32.General{Rows: 3, Cols: 2, Stride: 2, Data: []float32{
		7, 8,
		9, 10,
		11, 12,
	}}
	c := blas32.General{Rows: 2, Cols: 2, Stride: 2, Data: make([]float32, 4)}
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c)
	fmt.Println(c.Data)

	// Cᵀ·C - C, with the transpose read in place.
	d := blas32.General{Rows: 2, Cols: 2, Stride: 2, Data: append([]float32(nil), c.Data...)}
	blas32.Gemm(blas.Trans, blas.NoTrans, 1, c, c, -1, d)
	fmt.Println(d.Data)

	// Level 1 through the same implementation.
	x := blas32.Vector{N: 3, Inc: 1, Data: []float32{1, 2, 3}}
	y := blas32.Vector{N: 3, Inc: 1, Data: []float32{4, 5, 6}}
	fmt.Println(blas32.Dot(x, y))
	blas32.Axpy(2, x, y)
	fmt.Println(y.Data)
	// Output:
	// [58 64 139 154]
	// [22627 25054 24979 27658]
	// 32
	// [6 9 12]
}

// An Implementation can run on a chosen kernel implementation instead of
// kernels.Default(), for example the pure-Go reference.
func ExampleImplementation_kernels() {
	generic, err := kernels.Lookup("generic")
	if err != nil {
		panic(err)
	}
	var impl blas.Float32 = simdblas.Implementation{Kernels: generic}
	c := make([]float32, 4)
	// C = Aᵀ·B for A = [1 2; 3 4] stored 2×2 and B = I.
	impl.Sgemm(blas.Trans, blas.NoTrans, 2, 2, 2, 1, []float32{1, 2, 3, 4}, 2, []float32{1, 0, 0, 1}, 2, 0, c, 2)
	fmt.Println(c)
	// Routines without a kernel are gonum's own.
	fmt.Println(impl.Isamax(4, []float32{1, -7, 3, 5}, 1))
	// Output:
	// [1 3 2 4]
	// 1
}

// Sger adds a rank-one matrix alpha·x·yᵀ to A in place, one kernel call
// per row of A; the padding of A's rows (here the last column of each
// row, lda = 4 for n = 3) is left as it was.
func ExampleImplementation_Sger() {
	var impl blas.Float32 = simdblas.Implementation{}
	a := []float32{
		1, 1, 1, -9,
		2, 2, 2, -9,
	}
	x := []float32{1, 10}
	y := []float32{1, 2, 3}
	impl.Sger(2, 3, 2, x, 1, y, 1, a, 4)
	fmt.Println(a)
	// y taken backwards (a negative increment starts at the end), as in
	// gonum: yᵀ is [3 2 1].
	impl.Sger(2, 3, 1, x, 1, y, -1, a, 4)
	fmt.Println(a)
	// Output:
	// [3 5 7 -9 22 42 62 -9]
	// [6 7 8 -9 52 62 72 -9]
}
