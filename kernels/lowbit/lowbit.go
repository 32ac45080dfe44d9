// Package lowbit holds weight matrices stored in fewer bits than float32,
// for products that are bound by the bytes of weights they read: BF16
// (bfloat16, 2 bytes a weight) and Int8 (symmetric 8-bit integers with
// one float32 scale a group of 32, 1.125 bytes a weight).
//
// Both store an N×K matrix W row-major: row j holds output j's weights
// along K, the layout of y = W·x and of C = A·Wᵀ, so each row is read
// contiguously. A row is split into groups of GroupSize consecutive
// weights; the last group of a row whose K is not a multiple of
// GroupSize is padded with zero weights (bf16 +0, int8 0), so every row
// has Groups(K) whole groups and the same stride. Products over the
// matrices (kernels.GemvBF16, kernels.GemmInt8, ...) read whole groups of
// weights and only the K real elements of x.
//
// The types live in their own package, below package kernels, because
// the kernel sets (kernels/internal/kernelset) and the implementations
// take them as arguments and cannot import package kernels.
package lowbit

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// GroupSize is the number of consecutive weights along K of a group: an
// Int8 scale's extent and the unit of a row's padding, in both types.
const GroupSize = 32

// Groups returns the number of groups of a row of k weights (k >= 0),
// the last one padded when k is not a multiple of GroupSize.
func Groups(k int) int {
	g := k / GroupSize
	if k%GroupSize != 0 {
		g++
	}
	return g
}

// BF16 is an N×K matrix of bfloat16 weights: the upper 16 bits of the
// float32 they stand for. Row j occupies Data[j*Stride() : (j+1)*Stride()],
// a group of GroupSize weights w[0..31] (columns 32g..32g+31) the 32
// elements from 32g, interleaved by halves: element 2d holds w[d] and
// element 2d+1 holds w[16+d], for d < 16. Read as little-endian 32-bit
// words, word d of a group is w[d] | w[16+d]<<16, so shifting the words
// left by 16 yields w[0..15] as float32 and masking off their low halves
// yields w[16..31], with no 16-bit instruction. Use At or Row to read it.
type BF16 struct {
	N, K int      // rows (outputs) and columns (inputs); N, K >= 0
	Data []uint16 // N*Stride() elements
}

// Stride returns the number of elements of a row of Data:
// Groups(K)*GroupSize.
func (m *BF16) Stride() int { return Groups(m.K) * GroupSize }

// BF16Index returns the position within its row of Data of the element
// of column p (p >= 0): for writers that fill a BF16 matrix's rows
// themselves, without Set's checks.
func BF16Index(p int) int {
	g, q := p/GroupSize*GroupSize, p%GroupSize
	if q < GroupSize/2 {
		return g + 2*q
	}
	return g + 2*(q-GroupSize/2) + 1
}

// NewBF16 returns an n×k BF16 matrix of zeros; it panics, naming the
// sizes, if n or k is negative or the matrix's n·Groups(k)·GroupSize
// elements (2 bytes each) do not fit in an int or cannot be allocated.
func NewBF16(n, k int) *BF16 {
	count := checkShape("NewBF16", n, k, GroupSize, 2)
	return &BF16{N: n, K: k, Data: alloc[uint16]("NewBF16", n, k, count)}
}

// At returns the weight of row j, column p as a float32 (exact).
func (m *BF16) At(j, p int) float32 {
	m.checkAt("BF16.At", j, p)
	return FromBF16(m.Data[j*m.Stride()+BF16Index(p)])
}

// Set stores ToBF16(v) as the weight of row j, column p.
func (m *BF16) Set(j, p int, v float32) {
	m.checkAt("BF16.Set", j, p)
	m.Data[j*m.Stride()+BF16Index(p)] = ToBF16(v)
}

// Row writes row j's K weights, as float32 (exact), into dst[:K].
func (m *BF16) Row(j int, dst []float32) {
	m.checkRow("BF16.Row", j, dst)
	row := m.Data[j*m.Stride():]
	for p := range dst[:m.K] {
		dst[p] = FromBF16(row[BF16Index(p)])
	}
}

// Check panics, naming fn, unless m's shape is valid (N, K >= 0, and its
// N×Stride() elements and their bytes fit in an int) and Data holds its
// N×Stride() elements.
func (m *BF16) Check(fn string) {
	if m == nil {
		panic(fmt.Sprintf("%s: nil *lowbit.BF16", fn))
	}
	if m.N < 0 || m.K < 0 {
		panic(fmt.Sprintf("%s: BF16 matrix is %d×%d, sizes must be >= 0", fn, m.N, m.K))
	}
	if msg := tooLarge(m.N, m.K, GroupSize, 2); msg != "" {
		panic(fmt.Sprintf("%s: BF16 %s", fn, msg))
	}
	if want := m.N * m.Stride(); len(m.Data) < want || (m.Stride() > 0 && m.N > len(m.Data)/m.Stride()) {
		panic(fmt.Sprintf("%s: BF16 %d×%d: len(Data) = %d, want >= %d×%d", fn, m.N, m.K, len(m.Data), m.N, m.Stride()))
	}
}

func (m *BF16) checkAt(fn string, j, p int) {
	if j < 0 || j >= m.N || p < 0 || p >= m.K {
		panic(fmt.Sprintf("lowbit.%s: (%d, %d) is outside the %d×%d matrix", fn, j, p, m.N, m.K))
	}
}

func (m *BF16) checkRow(fn string, j int, dst []float32) {
	if j < 0 || j >= m.N {
		panic(fmt.Sprintf("lowbit.%s: row %d is outside the %d×%d matrix", fn, j, m.N, m.K))
	}
	if len(dst) < m.K {
		panic(fmt.Sprintf("lowbit.%s: len(dst) = %d, want >= %d", fn, len(dst), m.K))
	}
}

// ToBF16 rounds v to bfloat16, to nearest with ties to even. Infinities
// and zeros keep their sign; a NaN stays a NaN (its sign and upper payload
// kept, quiet bit set, so that truncating the payload cannot make it an
// infinity); finite values beyond the largest bfloat16 round to infinity.
func ToBF16(v float32) uint16 {
	b := math.Float32bits(v)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// FromBF16 returns the float32 that h stands for (exact).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// BF16FromKN converts the row-major k×n float32 matrix w (len(w) >= k*n;
// element (p, j) at w[p*n+j], the layout of a projection x·W) to the n×k
// BF16 matrix of its transpose, each weight rounded by ToBF16.
func BF16FromKN(w []float32, k, n int) *BF16 {
	checkShape("BF16FromKN", n, k, GroupSize, 2)
	checkSrc("BF16FromKN", w, k, n)
	m := NewBF16(n, k)
	s := m.Stride()
	for p := 0; p < k; p++ {
		q := BF16Index(p)
		for j, v := range w[p*n : p*n+n] {
			m.Data[j*s+q] = ToBF16(v)
		}
	}
	return m
}

// BF16FromNK converts the row-major n×k float32 matrix w (len(w) >= n*k;
// row j is output j's weights) to an n×k BF16 matrix, each weight rounded
// by ToBF16.
func BF16FromNK(w []float32, n, k int) *BF16 {
	checkShape("BF16FromNK", n, k, GroupSize, 2)
	checkSrc("BF16FromNK", w, n, k)
	m := NewBF16(n, k)
	s := m.Stride()
	for j := 0; j < n; j++ {
		for p, v := range w[j*k : j*k+k] {
			m.Data[j*s+BF16Index(p)] = ToBF16(v)
		}
	}
	return m
}

// Float32 returns m as a row-major N×K float32 matrix (exact).
func (m *BF16) Float32() []float32 {
	m.Check("lowbit.BF16.Float32")
	out := make([]float32, m.N*m.K)
	for j := 0; j < m.N; j++ {
		m.Row(j, out[j*m.K:])
	}
	return out
}

// Int8Block is one group of an Int8 matrix: GroupSize weights
// Scale*float32(Q[i]). Its memory layout (36 bytes: the scale's 4, then
// Q's 32, no padding) is the one the assembly kernels read.
type Int8Block struct {
	Scale float32
	Q     [GroupSize]int8
}

// Int8 is an N×K matrix of symmetric 8-bit weights with a float32 scale
// per group of GroupSize along K (see Int8Block): row j is the Groups(K)
// blocks Blocks[j*Groups(K):], the weight of column p being
// Scale*float32(Q[p%32]) of block p/32, computed in float32.
//
// The scale is a float32 rather than a float16 (as GGML's q8_0 stores
// it): it costs 2 bytes more a group (1.125 instead of 1.0625 bytes a
// weight), but is max|w|/127 rounded (see QuantizeGroup), needs no
// conversion in the kernels, and cannot overflow where float32 weights do
// not: no dequantized weight exceeds its group's max|w|, so none is
// infinite. A group whose max|w| is below 127·2⁻¹²⁶ has a subnormal
// scale and fewer significant bits than 8.
type Int8 struct {
	N, K   int // rows (outputs) and columns (inputs); N, K >= 0
	Blocks []Int8Block
}

// NewInt8 returns an n×k Int8 matrix of zeros (every scale 0); it panics,
// naming the sizes, if n or k is negative or the matrix's n·Groups(k)
// blocks (36 bytes each) do not fit in an int or cannot be allocated.
func NewInt8(n, k int) *Int8 {
	count := checkShape("NewInt8", n, k, 1, int(unsafe.Sizeof(Int8Block{})))
	return &Int8{N: n, K: k, Blocks: alloc[Int8Block]("NewInt8", n, k, count)}
}

// At returns the weight of row j, column p: Scale*float32(Q), rounded to
// float32.
func (m *Int8) At(j, p int) float32 {
	if j < 0 || j >= m.N || p < 0 || p >= m.K {
		panic(fmt.Sprintf("lowbit.Int8.At: (%d, %d) is outside the %d×%d matrix", j, p, m.N, m.K))
	}
	b := &m.Blocks[j*Groups(m.K)+p/GroupSize]
	return b.Scale * float32(b.Q[p%GroupSize])
}

// Row writes row j's K weights, dequantized as At does, into dst[:K].
func (m *Int8) Row(j int, dst []float32) {
	if j < 0 || j >= m.N {
		panic(fmt.Sprintf("lowbit.Int8.Row: row %d is outside the %d×%d matrix", j, m.N, m.K))
	}
	if len(dst) < m.K {
		panic(fmt.Sprintf("lowbit.Int8.Row: len(dst) = %d, want >= %d", len(dst), m.K))
	}
	g := Groups(m.K)
	for p := range dst[:m.K] {
		b := &m.Blocks[j*g+p/GroupSize]
		dst[p] = b.Scale * float32(b.Q[p%GroupSize])
	}
}

// Check panics, naming fn, unless m's shape is valid (N, K >= 0, and its
// N×Groups(K) blocks and their bytes fit in an int) and Blocks holds its
// N×Groups(K) blocks.
func (m *Int8) Check(fn string) {
	if m == nil {
		panic(fmt.Sprintf("%s: nil *lowbit.Int8", fn))
	}
	if m.N < 0 || m.K < 0 {
		panic(fmt.Sprintf("%s: Int8 matrix is %d×%d, sizes must be >= 0", fn, m.N, m.K))
	}
	if msg := tooLarge(m.N, m.K, 1, int(unsafe.Sizeof(Int8Block{}))); msg != "" {
		panic(fmt.Sprintf("%s: Int8 %s", fn, msg))
	}
	g := Groups(m.K)
	if len(m.Blocks) < m.N*g || (g > 0 && m.N > len(m.Blocks)/g) {
		panic(fmt.Sprintf("%s: Int8 %d×%d: len(Blocks) = %d, want >= %d×%d", fn, m.N, m.K, len(m.Blocks), m.N, g))
	}
}

// QuantizeGroup sets b from the weights w (len(w) <= GroupSize; the
// missing ones are zeros): Scale = max|w|/127 rounded to the nearest
// float32 (0 when every weight is 0), lowered to the next float32 towards
// 0 when float32(Scale*127) would be above max|w|, and Q[i] = w[i]/Scale
// (computed in float64) rounded to the nearest integer, ties to even,
// clamped to [-127, 127]. So no dequantized weight (At: Scale*float32(Q),
// rounded) is larger in magnitude than max|w|, and a group holding
// ±MaxFloat32 dequantizes to finite weights. Each weight is within
// Scale/2 of float64(Scale)*float64(Q[i]) when Scale is a normal float32
// (max|w| >= 127·2⁻¹²⁶). It returns the index of the first weight that
// is not finite, or -1; b is left unchanged then.
func QuantizeGroup(b *Int8Block, w []float32) int {
	if len(w) > GroupSize {
		panic(fmt.Sprintf("lowbit.QuantizeGroup: len(w) = %d, more than a group of %d", len(w), GroupSize))
	}
	var mx float32
	for i, v := range w {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
		mx = max(mx, float32(math.Abs(float64(v))))
	}
	*b = Int8Block{}
	if mx == 0 {
		return -1
	}
	b.Scale = mx / 127
	if float32(b.Scale*127) > mx {
		b.Scale = math.Nextafter32(b.Scale, 0)
	}
	s := float64(b.Scale)
	for i, v := range w {
		q := math.RoundToEven(float64(v) / s)
		b.Q[i] = int8(max(-127, min(127, q)))
	}
	return -1
}

// Int8FromKN quantizes the transpose of the row-major k×n float32 matrix
// w (len(w) >= k*n; element (p, j) at w[p*n+j], the layout of a
// projection x·W) to an n×k Int8 matrix, group by group with
// QuantizeGroup. It returns an error naming the first weight that is not
// finite.
func Int8FromKN(w []float32, k, n int) (*Int8, error) {
	checkShape("Int8FromKN", n, k, 1, int(unsafe.Sizeof(Int8Block{})))
	checkSrc("Int8FromKN", w, k, n)
	m := NewInt8(n, k)
	g := Groups(k)
	var buf [GroupSize]float32
	for j := 0; j < n; j++ {
		for q := 0; q < g; q++ {
			cols := min(GroupSize, k-q*GroupSize)
			for i := 0; i < cols; i++ {
				buf[i] = w[(q*GroupSize+i)*n+j]
			}
			if i := QuantizeGroup(&m.Blocks[j*g+q], buf[:cols]); i >= 0 {
				p := q*GroupSize + i
				return nil, fmt.Errorf("lowbit.Int8FromKN: weight (%d, %d) = %v is not finite", p, j, w[p*n+j])
			}
		}
	}
	return m, nil
}

// Int8FromNK quantizes the row-major n×k float32 matrix w (len(w) >= n*k;
// row j is output j's weights) to an n×k Int8 matrix, group by group with
// QuantizeGroup. It returns an error naming the first weight that is not
// finite.
func Int8FromNK(w []float32, n, k int) (*Int8, error) {
	checkShape("Int8FromNK", n, k, 1, int(unsafe.Sizeof(Int8Block{})))
	checkSrc("Int8FromNK", w, n, k)
	m := NewInt8(n, k)
	g := Groups(k)
	for j := 0; j < n; j++ {
		for q := 0; q < g; q++ {
			lo := j*k + q*GroupSize
			hi := j*k + min(k, (q+1)*GroupSize)
			if i := QuantizeGroup(&m.Blocks[j*g+q], w[lo:hi]); i >= 0 {
				return nil, fmt.Errorf("lowbit.Int8FromNK: weight (%d, %d) = %v is not finite", j, q*GroupSize+i, w[lo+i])
			}
		}
	}
	return m, nil
}

// Float32 returns m dequantized (see At) as a row-major N×K float32
// matrix.
func (m *Int8) Float32() []float32 {
	m.Check("lowbit.Int8.Float32")
	out := make([]float32, m.N*m.K)
	for j := 0; j < m.N; j++ {
		m.Row(j, out[j*m.K:])
	}
	return out
}

// Int16Max is the largest magnitude QuantizeInt16 gives an activation.
const Int16Max = 32767

// minInt16Max is the smallest max|x| QuantizeInt16 accepts: its scale,
// max|x|/Int16Max, must be a normal float32.
const minInt16Max = Int16Max * 0x1p-126

// QuantizeInt16 quantizes the activations x for the products over Int8
// weights, which multiply int8 weights by int16 activations exactly in
// integers: it sets q[p] to x[p]/scale rounded to the nearest integer
// (ties to even), where scale = max|x|/Int16Max rounded to float32, so
// that |q[p]| <= Int16Max and |x[p] - scale*q[p]| <= scale/2 (plus
// float32's rounding of scale, under 2⁻²⁴ of |x[p]|). It returns scale and
// true; when every element is 0, scale is 0 and q zeros. It returns false,
// leaving q unspecified, when an element is not finite or max|x| is
// positive but below Int16Max·2⁻¹²⁶ (the scale would not be a normal
// float32): the products compute such rows in float32 instead. It panics
// if len(q) < len(x).
func QuantizeInt16(q []int16, x []float32) (scale float32, ok bool) {
	if len(q) < len(x) {
		panic(fmt.Sprintf("lowbit.QuantizeInt16: len(q) = %d, want >= len(x) = %d", len(q), len(x)))
	}
	scale, inv, ok := Int16Scale(x)
	switch {
	case !ok:
		return 0, false
	case scale == 0:
		clear(q[:len(x)])
	default:
		QuantizeInt16Scaled(q, x, inv)
	}
	return scale, true
}

// Int16Scale returns the scale QuantizeInt16 gives x, max|x|/Int16Max
// rounded to float32, the inverse of that float32 in float64
// (QuantizeInt16Scaled multiplies by it), and true; or 0, 0 and true when
// every element is 0; or false when QuantizeInt16 refuses x (an element
// that is not finite, or a scale that would not be a normal float32).
func Int16Scale(x []float32) (scale float32, inv float64, ok bool) {
	// The encodings of |x[p]| order as the magnitudes do, infinities and
	// NaNs above every finite value.
	var mb uint32
	for _, v := range x {
		mb = max(mb, math.Float32bits(v)&^(1<<31))
	}
	if mb >= 0x7f800000 {
		return 0, 0, false // NaN or infinity
	}
	mx := math.Float32frombits(mb)
	if mx == 0 {
		return 0, 0, true
	}
	if mx < minInt16Max {
		return 0, 0, false
	}
	scale = float32(float64(mx) / Int16Max)
	return scale, 1 / float64(scale), true
}

// QuantizeInt16Scaled sets q[p] to float64(x[p])·inv (rounded to
// float64) rounded to the nearest integer, ties to even, and clamped to
// ±Int16Max, for p < len(x): QuantizeInt16's activations for the inverse
// of their scale (Int16Scale). x's elements must be finite and
// |x[p]·inv| below 2⁵¹. It panics if len(q) < len(x).
func QuantizeInt16Scaled(q []int16, x []float32, inv float64) {
	// Adding 1.5·2⁵² rounds a float64 of magnitude below 2⁵¹ to an
	// integer n, to nearest with ties to even, and leaves 2⁵¹+n in the
	// mantissa; the conversion before the addition keeps the product
	// rounded on its own, never fused.
	if len(q) < len(x) {
		panic(fmt.Sprintf("lowbit.QuantizeInt16Scaled: len(q) = %d, want >= len(x) = %d", len(q), len(x)))
	}
	const round = 0x1.8p52
	q = q[:len(x)]
	for p, v := range x {
		r := int64(math.Float64bits(float64(float64(v)*inv)+round)&(1<<52-1)) - 1<<51
		q[p] = int16(max(-Int16Max, min(Int16Max, r)))
	}
}

// checkShape panics unless n, k >= 0 and an n×k matrix of rows of
// Groups(k) groups of per elements, each of size bytes, has a number of
// elements and of bytes that fit in an int; it returns the elements.
func checkShape(fn string, n, k, per, size int) int {
	if n < 0 || k < 0 {
		panic(fmt.Sprintf("lowbit.%s: n = %d, k = %d, must be >= 0", fn, n, k))
	}
	if msg := tooLarge(n, k, per, size); msg != "" {
		panic(fmt.Sprintf("lowbit.%s: %s", fn, msg))
	}
	return n * Groups(k) * per
}

// tooLarge describes why an n×k matrix (n, k >= 0) of rows of Groups(k)
// groups of per elements of size bytes is too large to address, or
// returns "" when its bytes fit in an int.
func tooLarge(n, k, per, size int) string {
	row := Groups(k)
	if row > math.MaxInt/per/size || n > 0 && row > 0 && n > math.MaxInt/(row*per*size) {
		return fmt.Sprintf("%d×%d: %s elements of %d bytes, more than an int can count", n, k, bigProduct(n, row, per), size)
	}
	return ""
}

// bigProduct formats a·b·c for a, b, c >= 0, exactly where it fits in
// 64 bits and as the product written out where it does not.
func bigProduct(a, b, c int) string {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi == 0 {
		if hi, lo = bits.Mul64(lo, uint64(c)); hi == 0 {
			return fmt.Sprint(lo)
		}
	}
	return fmt.Sprintf("%d·%d·%d", a, b, c)
}

// alloc returns count zero elements for an n×k matrix of fn, panicking
// with fn's name and the sizes where the runtime refuses the allocation.
func alloc[T any](fn string, n, k, count int) []T {
	defer func() {
		if r := recover(); r != nil {
			panic(fmt.Sprintf("lowbit.%s: cannot allocate an %d×%d matrix (%d elements of %d bytes): %v", fn, n, k, count, unsafe.Sizeof(*new(T)), r))
		}
	}()
	return make([]T, count)
}

// checkSrc panics unless w holds a rows×cols matrix.
func checkSrc(fn string, w []float32, rows, cols int) {
	if cols > 0 && (rows > len(w)/cols || len(w) < rows*cols) {
		panic(fmt.Sprintf("lowbit.%s: len(w) = %d, want >= %d×%d", fn, len(w), rows, cols))
	}
}
