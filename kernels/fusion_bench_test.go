package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkFusion compares each fused kernel with the calls it replaces on
// the default implementation, at the GPT's shapes (config b: 2048 rows of
// width 384 and MLP width 1536; a replica's half: 1024 rows; config a:
// 768 rows of 128 and 512), fused and unfused alternating with -count:
//
//	go test -run '^$' -bench Fusion -count 6 ./kernels/
//
// gemmbiasgelu/MxNxK: GemmBiasGELU against Gemm then BiasGELU;
// gemmbias/MxNxK: GemmBias (N = 3·width: the attention's QKV projection)
// against the bias copied into every row of C, then Gemm with beta 1;
// addlayernorm/MxN: AddLayerNorm against Add then LayerNorm.
func BenchmarkFusion(b *testing.B) {
	for _, s := range [][3]int{{2048, 1536, 384}, {1024, 1536, 384}, {768, 512, 128}} {
		m, n, k := s[0], s[1], s[2]
		r := newRand(1)
		a, w, bias := randSlice(r, m*k), randSlice(r, k*n), randSlice(r, n)
		pre, out := make([]float32, m*n), make([]float32, m*n)
		x, res, sum, y := randSlice(r, m*k), randSlice(r, m*k), make([]float32, m*k), make([]float32, m*k)
		g, be, mean, rstd := randSlice(r, k), randSlice(r, k), make([]float32, m), make([]float32, m)
		p := Default()
		b.Run(fmt.Sprintf("gemmbiasgelu/%dx%dx%d/fused", m, n, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.GemmBiasGELU(false, false, m, n, k, a, k, w, n, bias, pre, n, out, n)
			}
		})
		b.Run(fmt.Sprintf("gemmbiasgelu/%dx%dx%d/unfused", m, n, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.Gemm(false, false, m, n, k, 1, a, k, w, n, 0, pre, n)
				p.BiasGELU(m, n, pre, n, bias, out, n)
			}
		})
		n3 := 3 * k
		wq, bq, qkv := randSlice(r, k*n3), randSlice(r, n3), make([]float32, m*n3)
		b.Run(fmt.Sprintf("gemmbias/%dx%dx%d/fused", m, n3, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.GemmBias(false, false, m, n3, k, x, k, wq, n3, bq, qkv, n3)
			}
		})
		b.Run(fmt.Sprintf("gemmbias/%dx%dx%d/unfused", m, n3, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for j := 0; j < m; j++ {
					copy(qkv[j*n3:(j+1)*n3], bq)
				}
				p.Gemm(false, false, m, n3, k, 1, x, k, wq, n3, 1, qkv, n3)
			}
		})
		b.Run(fmt.Sprintf("addlayernorm/%dx%d/fused", m, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.AddLayerNorm(m, k, x, k, res, k, sum, k, g, be, 1e-5, y, k, mean, rstd)
			}
		})
		b.Run(fmt.Sprintf("addlayernorm/%dx%d/unfused", m, k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.Add(sum, x, res)
				p.LayerNorm(m, k, sum, k, g, be, 1e-5, y, k, mean, rstd)
			}
		})
	}
}
