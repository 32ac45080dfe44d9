package gemm

// AddRow is the signature of a set's Add: dst[i] = x[i] + y[i] over
// len(dst) elements (x and y exactly as long; dst may be x or y).
type AddRow func(dst, x, y []float32)

// Bias returns the epilogue of a kernel set's GemmBias (see
// EpilogueFunc) that adds with add: c_i += bias on each row i of
// the m×n block c. It takes no matrix.
func Bias(add AddRow) func(m, n int, c []float32, ldc int, bias, _ []float32, _ int) {
	return func(m, n int, c []float32, ldc int, bias, _ []float32, _ int) {
		bias = bias[:n]
		for i := 0; i < m; i++ {
			ci := c[i*ldc : i*ldc+n]
			add(ci, ci, bias)
		}
	}
}
