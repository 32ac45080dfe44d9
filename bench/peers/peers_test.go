package peers

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/bench"
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
	want := []string{"gonum", "gonum+simdblas"}
	if OpenBLASBuilt {
		want = append(want, "openblas")
		if _, err := kernels.Lookup("avx2"); err == nil {
			want = append(want, "openblas-avx2")
		}
	}
	var names []string
	for _, p := range peers {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("peers %q (OpenBLASBuilt = %v), want %q", names, OpenBLASBuilt, want)
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

// TestSimdBLASRunsOurGemm checks that the gonum+simdblas peer computes
// with simdgpt's default implementation: its results are bit for bit
// those of kernels.Default().Gemm (gonum's own Sgemm sums in another
// order), on a product large enough for the blocked, packed path.
func TestSimdBLASRunsOurGemm(t *testing.T) {
	p := SimdBLAS()
	def := kernels.Default()
	if p.Name != "gonum+simdblas" || !p.Peer || p.ISA != bench.Ours(def).ISA {
		t.Fatalf("SimdBLAS() = %q, Peer %v, ISA %v", p.Name, p.Peer, p.ISA)
	}
	if !strings.Contains(p.About, "kernels/simdblas") || !strings.HasSuffix(p.About, "simdgpt "+def.Name()) {
		t.Errorf("About %q does not name simdblas and %s", p.About, def.Name())
	}
	for _, tc := range []struct {
		transA, transB bool
		m, n, k        int
	}{
		{false, false, 67, 45, 129},
		{true, false, 33, 70, 64},
		{false, true, 128, 17, 300},
		{true, true, 5, 5, 5},
	} {
		ar, ac := tc.m, tc.k
		if tc.transA {
			ar, ac = ac, ar
		}
		br, bc := tc.k, tc.n
		if tc.transB {
			br, bc = bc, br
		}
		a, b := seq(ar*ac, 0.125), seq(br*bc, -0.75)
		want, got := seq(tc.m*tc.n, 2), seq(tc.m*tc.n, 2)
		def.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 0.5, a, ac, b, bc, 1.5, want, tc.n)
		p.Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 0.5, a, ac, b, bc, 1.5, got, tc.n)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: c[%d] = %v, want %v (kernels.Default().Gemm)", tc, i, got[i], want[i])
			}
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
