//go:build arm64 && !purego

package arm64

// gemmKernel8x12NEON computes one 8×12 tile, C = alpha*A*B + beta*C, with
// A a packed panel, A(i,p) at a[8*p+i] for all 8 rows and p < k (rsa, csa
// unused); B k rows of 12 floats at a stride of ldb floats (all 12 read);
// and only the first rows×cols corner of C (leading dimension ldc,
// 1 <= rows <= 8, 1 <= cols <= 12) read or written; C is not read when
// beta is ±0. Requires ASIMD. Arguments are not checked.
//
//go:noescape
func gemmKernel8x12NEON(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)

// gemmKernel8x4NEON is gemmKernel8x12NEON for a tile of 8×4: B rows of 4
// floats, 1 <= cols <= 4.
//
//go:noescape
func gemmKernel8x4NEON(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)
