//go:build openblas

package peers

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/bench"
	"github.com/simdgpt/simdgpt/kernels"
)

// childEnv marks a run of this test binary as the child of
// TestOpenBLASInstances.
const childEnv = "SIMDGPT_PEERS_TEST_CHILD"

// productHash returns a hash of the bits of a 200×200×200 product by
// OpenBLAS instance inst (0: the process's, 1: the second one) on one
// thread. OpenBLAS's kernels for different cores sum in different orders,
// so the hash tells which kernels ran.
func productHash(inst int) string {
	const n = 200
	a, b, c := seq(n*n, 0.3), seq(n*n, -0.1), make([]float32, n*n)
	setThreads(inst, 1)
	sgemm(inst, false, false, n, n, n, 1, a, n, b, n, 0, c, n)
	h := fnv.New64a()
	for _, v := range c {
		u := math.Float32bits(v)
		h.Write([]byte{byte(u), byte(u >> 8), byte(u >> 16), byte(u >> 24)})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestOpenBLASInstances checks the two OpenBLAS peers against this test
// binary run again as a child, which computes with its one OpenBLAS
// instance: with OPENBLAS_CORETYPE set to the AVX2 core, the child's
// results must be bit for bit those of openblas-avx2 (so the second
// instance runs the kernels it names), and with the environment as it is,
// those of openblas (so loading the second instance left the first one's
// kernels alone).
func TestOpenBLASInstances(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		fmt.Printf("hash %s core %s\n", productHash(0), coreName(0))
		os.Exit(0)
	}
	var avx2 *bench.Impl
	peers := All()
	for _, p := range peers {
		if p.Name == "openblas-avx2" {
			avx2 = p
		}
	}
	if _, err := kernels.Lookup("avx2"); err != nil {
		if avx2 != nil {
			t.Fatalf("openblas-avx2 without simdgpt's avx2 (%v)", err)
		}
		t.Skipf("no AVX2 here: %v", err)
	}
	if avx2 == nil {
		t.Fatalf("no openblas-avx2 peer; openblas: %s", peers[2].About)
	}
	core := OpenBLASAVX2Core()
	if want := "OPENBLAS_CORETYPE=" + core + ": core " + core + "; OpenBLAS"; !strings.Contains(avx2.About, want) {
		t.Errorf("openblas-avx2 About %q lacks %q", avx2.About, want)
	}
	if avx2.ISA == nil || avx2.ISA.Name() != "avx2" {
		t.Errorf("openblas-avx2 ISA %v, want avx2", avx2.ISA)
	}
	for _, tc := range []struct {
		name string
		env  []string
		inst int
	}{
		{"openblas-avx2", []string{"OPENBLAS_CORETYPE=" + core}, 1},
		{"openblas", nil, 0},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenBLASInstances$")
		cmd.Env = append(append(os.Environ(), childEnv+"=1"), tc.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr // where the runtime warns about GODEBUG, for one
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child %v: %v\n%s%s", tc.env, err, out, stderr.String())
		}
		var wantHash, childCore string
		if _, err := fmt.Sscanf(string(out), "hash %s core %s", &wantHash, &childCore); err != nil {
			t.Fatalf("child %v printed %q", tc.env, out)
		}
		if got := productHash(tc.inst); got != wantHash {
			t.Errorf("%s: product hash %s, want %s, that of OpenBLAS alone in a process with %v (core %s)", tc.name, got, wantHash, tc.env, childCore)
		}
	}
}

// TestOpenBLASGemv checks the Gemv of every OpenBLAS peer against a
// float64 reference: both transposes, shapes across OpenBLAS's blocks,
// a padded leading dimension, beta 0 and not, and y left alone beyond
// its length.
func TestOpenBLASGemv(t *testing.T) {
	for _, p := range All() {
		if !strings.HasPrefix(p.Name, "openblas") {
			continue
		}
		if p.Gemv == nil {
			t.Fatalf("%s has no Gemv", p.Name)
		}
		for _, trans := range []bool{false, true} {
			for _, sh := range [][2]int{{1, 1}, {7, 33}, {33, 7}, {130, 257}, {600, 40}} {
				m, n := sh[0], sh[1]
				for _, beta := range []float32{0, 0.5} {
					lda := n + 3
					xlen, ylen := n, m
					if trans {
						xlen, ylen = m, n
					}
					a, x := seq(m*lda, 0.3), seq(xlen, -0.7)
					y := seq(ylen+1, 0.11)
					y0 := append([]float32(nil), y...)
					p.Gemv(trans, m, n, 1.5, a, lda, x, beta, y[:ylen])
					for i := 0; i < ylen; i++ {
						var s, mag float64
						for q := 0; q < xlen; q++ {
							var av float32
							if trans {
								av = a[q*lda+i]
							} else {
								av = a[i*lda+q]
							}
							v := float64(av) * float64(x[q])
							s += v
							mag += math.Abs(v)
						}
						want := 1.5*s + float64(beta)*float64(y0[i])
						tol := 1e-6 * float64(xlen+2) * (1.5*mag + math.Abs(float64(beta)*float64(y0[i])))
						if math.Abs(float64(y[i])-want) > tol {
							t.Fatalf("%s trans=%v %d×%d beta=%v: y[%d] = %v, want %v", p.Name, trans, m, n, beta, i, y[i], want)
						}
					}
					if y[ylen] != y0[ylen] {
						t.Fatalf("%s trans=%v %d×%d: wrote past y", p.Name, trans, m, n)
					}
				}
			}
		}
	}
}
