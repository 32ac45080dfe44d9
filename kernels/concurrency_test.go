package kernels

import (
	"runtime"
	"sync"
	"testing"
)

// TestConcurrentCalls runs GEMMs large enough to use the goroutine pool,
// small GEMMs and MaskedScores from many goroutines at once (as attention
// does across heads) and checks every result against a serial run: the
// shared packing buffers and the pool must not mix up callers.
func TestConcurrentCalls(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	type job struct {
		m, n, k int
		a, b    []float32
		want    []float32
	}
	r := newRand(21)
	var jobs []job
	for _, s := range [][3]int{{300, 200, 150}, {64, 65, 33}, {17, 300, 70}, {256, 256, 128}} {
		j := job{m: s[0], n: s[1], k: s[2], a: randSlice(r, s[0]*s[2]), b: randSlice(r, s[2]*s[1])}
		j.want = make([]float32, j.m*j.n)
		Gemm(false, false, j.m, j.n, j.k, 1, j.a, j.k, j.b, j.n, 0, j.want, j.n)
		jobs = append(jobs, j)
	}
	const T, d = 100, 32
	q, k := randSlice(r, T*d), randSlice(r, T*d)
	wantS := make([]float32, T*T)
	MaskedScores(T, T, d, 0.25, q, d, k, d, 0, wantS, T)

	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for it := 0; it < 5; it++ {
				j := jobs[(g+it)%len(jobs)]
				c := make([]float32, j.m*j.n)
				Gemm(false, false, j.m, j.n, j.k, 1, j.a, j.k, j.b, j.n, 0, c, j.n)
				for i := range c {
					if c[i] != j.want[i] {
						errs <- "Gemm result differs from the serial run"
						return
					}
				}
				s := make([]float32, T*T)
				MaskedScores(T, T, d, 0.25, q, d, k, d, 0, s, T)
				for i := range s {
					if s[i] != wantS[i] {
						errs <- "MaskedScores result differs from the serial run"
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
