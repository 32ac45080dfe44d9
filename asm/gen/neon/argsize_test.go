package main

import "testing"

// TestArgSize checks the argument sizes argSize derives from signatures
// against the ABI0 layout on arm64 (the sizes go vet's asmdecl expects).
func TestArgSize(t *testing.T) {
	for _, c := range []struct {
		sig  string
		name string
		size int
	}{
		{"func f(n int)", "f", 8},
		{"func dot(x, y []float32) float32", "dot", 52},
		{"func axpy(alpha float32, x, y []float32)", "axpy", 56},
		{"func sum(x []float32) float64", "sum", 32},
		{"func exp(dst, src []float32, c, b, thr float32) float64", "exp", 72},
		{"func ln(y, x, gamma, beta []float32, eps float32) (mean, rstd float32)", "ln", 112},
		{"func k(rows, groups int, w *byte, ldw int, x *int16, ldx int, xs *float32, c *float32, ldc int, beta float32)", "k", 76},
		{"func g(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, rows, cols int, alpha, beta float32)", "g", 88},
		{"func b(x byte, y int16, z int32, w bool) uint16", "b", 18},
	} {
		name, size := argSize(c.sig)
		if name != c.name || size != c.size {
			t.Errorf("argSize(%q) = %s, %d; want %s, %d", c.sig, name, size, c.name, c.size)
		}
	}
}
