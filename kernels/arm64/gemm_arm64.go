//go:build arm64 && !purego

package arm64

// GemmKernel8x12NEON computes one full 8×12 tile, C = alpha*A*B + beta*C,
// with A a packed panel, A(i,p) at a[8*p+i] for all 8 rows and p < k; B k
// rows of 12 floats at a stride of ldb floats (all 12 read); and C 8 rows
// of 12 floats with leading dimension ldc, read only when beta is not ±0.
// Requires ASIMD. Arguments are not checked.
//
//go:noescape
func GemmKernel8x12NEON(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// GemmKernel8x4NEON is GemmKernel8x12NEON for a tile of 8×4: B rows of 4
// floats, C 8 rows of 4 floats.
//
//go:noescape
func GemmKernel8x4NEON(k int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)
