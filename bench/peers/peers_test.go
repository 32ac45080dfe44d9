package peers

import (
	"math"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
)

// TestPeersMatchGeneric checks every peer's GEMM against simdgpt's
// generic Gemm in all four transpose combinations, with leading
// dimensions wider than the rows and a non-zero beta.
func TestPeersMatchGeneric(t *testing.T) {
	generic, err := kernels.Lookup("generic")
	if err != nil {
		t.Fatal(err)
	}
	peers := All()
	if OpenBLASBuilt != (len(peers) == 2) {
		t.Fatalf("%d peers with OpenBLASBuilt = %v", len(peers), OpenBLASBuilt)
	}
	const m, n, k, pad = 7, 9, 5, 3
	for _, p := range peers {
		for _, transA := range []bool{false, true} {
			for _, transB := range []bool{false, true} {
				ar, ac := m, k
				if transA {
					ar, ac = k, m
				}
				br, bc := k, n
				if transB {
					br, bc = n, k
				}
				a, b := seq(ar*(ac+pad), 0.25), seq(br*(bc+pad), -0.5)
				want, got := seq(m*(n+pad), 1), seq(m*(n+pad), 1)
				generic.Gemm(transA, transB, m, n, k, 1.5, a, ac+pad, b, bc+pad, 0.5, want, n+pad)
				p.Gemm(transA, transB, m, n, k, 1.5, a, ac+pad, b, bc+pad, 0.5, got, n+pad)
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-4*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("%s transA=%v transB=%v: c[%d] = %v, want %v", p.Name, transA, transB, i, got[i], want[i])
					}
				}
			}
		}
		if p.About == "" || !p.Peer {
			t.Errorf("%s: About %q, Peer %v", p.Name, p.About, p.Peer)
		}
	}
}

// seq returns n values spread over [-1, 1] with a pattern set by step.
func seq(n int, step float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.Sin(float64(float32(i) * (step + 0.37))))
	}
	return s
}
