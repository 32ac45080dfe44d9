package attention

import (
	"fmt"
	"math"
)

// Params are views of one layer's parameters; the caller owns the memory
// (for example a model's flat parameter buffer, see ViewParams). The same
// type holds their gradients.
type Params struct {
	WQKV  []float32 // [C,3C] row-major: x·WQKV gives Q, K, V side by side
	BQKV  []float32 // [3C]
	WProj []float32 // [C,C] row-major
	BProj []float32 // [C]
}

// NumParams is the number of float32 parameters of a layer of width c:
// 3c·c + 3c + c·c + c. It panics if c < 0 or c > the largest width
// whose count is an int (about 1.5e9 with a 64-bit int).
func NumParams(c int) int {
	if c < 0 || c > maxC {
		panic(fmt.Sprintf("attention.NumParams: c = %d, must be in [0, %d] (the count 4c²+4c must be an int)", c, maxC))
	}
	return 3*c*c + 3*c + c*c + c
}

// maxC is the largest width c whose parameter count 4c(c+1) is an int.
var maxC = func() int {
	c := int(math.Sqrt(float64(math.MaxInt / 4)))
	for c > 0 && c > math.MaxInt/4/(c+1) {
		c--
	}
	for c+1 <= math.MaxInt/4/(c+2) {
		c++
	}
	return c
}()

// ViewParams slices buf into the parameters of a layer of width c, in the
// order WQKV, BQKV, WProj, BProj (the order of Params' fields). The views
// share buf's memory and have capacity equal to their length. It panics if
// c < 1, if NumParams(c) is not an int or if len(buf) < NumParams(c); a
// longer buf is allowed (only its first NumParams(c) elements are used).
func ViewParams(c int, buf []float32) Params {
	if c < 1 {
		panic(fmt.Sprintf("attention.ViewParams: c = %d, must be >= 1", c))
	}
	if c > maxC {
		panic(fmt.Sprintf("attention.ViewParams: c = %d, must be <= %d (NumParams(c) must be an int)", c, maxC))
	}
	if n := NumParams(c); len(buf) < n {
		panic(fmt.Sprintf("attention.ViewParams: len(buf) = %d, want >= NumParams(%d) = %d", len(buf), c, n))
	}
	var p Params
	off := 0
	take := func(n int) []float32 {
		s := buf[off : off+n : off+n]
		off += n
		return s
	}
	p.WQKV = take(3 * c * c)
	p.BQKV = take(3 * c)
	p.WProj = take(c * c)
	p.BProj = take(c)
	return p
}

// check panics unless every slice of p has exactly the length a layer of
// width c needs. fn is the method and arg the argument's name.
func (p *Params) check(fn, arg string, c int) {
	checkParam(fn, arg, "WQKV", p.WQKV, c, 3*c)
	checkParam(fn, arg, "BQKV", p.BQKV, 1, 3*c)
	checkParam(fn, arg, "WProj", p.WProj, c, c)
	checkParam(fn, arg, "BProj", p.BProj, 1, c)
}

// checkParam panics unless len(s) == rows*cols; a vector has rows = 1.
func checkParam(fn, arg, field string, s []float32, rows, cols int) {
	if len(s) == rows*cols {
		return
	}
	shape := fmt.Sprintf("[%d]", cols)
	if rows > 1 {
		shape = fmt.Sprintf("[%d,%d]", rows, cols)
	}
	panic(fmt.Sprintf("attention.%s: len(%s.%s) = %d, want %d for a %s of shape %s", fn, arg, field, len(s), rows*cols, field, shape))
}
