package bench

import (
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/kernels"
)

// TestStreamBytes checks the size of the streaming copy's buffers: four
// L3s rounded up to a MiB, at least 64 MiB, 256 MiB for an unknown L3.
func TestStreamBytes(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ l3, want int }{
		{0, 256 * mib},
		{-1, 256 * mib},
		{8 * mib, 64 * mib},
		{32 * mib, 128 * mib},
		{96 * mib, 384 * mib},
		{24*mib + 1, 97 * mib},
		{260 * mib, 1040 * mib},
	} {
		if got := streamBytes(tc.l3); got != tc.want {
			t.Errorf("streamBytes(%d) = %d, want %d", tc.l3, got, tc.want)
		}
	}
}

// TestCopyKernel checks the copy kernel's shapes and work, that memmove
// is its only Impl (and runs nothing else), and that Run measures it.
func TestCopyKernel(t *testing.T) {
	k := kernelByName(t, "copy")
	if k.Bound != MemoryBound || k.Short != "1MiB" {
		t.Errorf("copy: bound %v, short %q", k.Bound, k.Short)
	}
	stream := streamBytes(kernels.CPU().L3)
	for _, tc := range []struct {
		shape string
		n     int
	}{{"1MiB", 1 << 20}, {"stream", stream}} {
		s := shapeOf(t, k, tc.shape)
		if s.N != tc.n || k.Work(s) != (Work{Bytes: 2 * float64(tc.n)}) {
			t.Errorf("%s: N %d, work %+v; want N %d, %d bytes", tc.shape, s.N, k.Work(s), tc.n, 2*tc.n)
		}
	}
	if l3 := kernels.CPU().L3; l3 > 0 && stream < 4*l3 {
		t.Errorf("stream copies %d bytes, less than 4× the L3 of %d", stream, l3)
	}
	m := Memmove()
	if m.Name != "memmove" || !m.Peer || m.About == "" || m != Memmove() {
		t.Errorf("Memmove() = %+v", m)
	}
	s := shapeOf(t, k, "1MiB")
	for _, im := range append(OursAll(), GemmThenMask(kernels.Default())) {
		if k.Supports(s, im) {
			t.Errorf("%s runs the copy kernel", im.Name)
		}
	}
	for _, other := range Kernels() {
		if other.Name != "copy" && other.Supports(other.Shapes[0], m) {
			t.Errorf("memmove runs %s", other.Name)
		}
	}
	res := Run(Case{k, s}, append(OursAll(), m), Options{Count: 2, Time: time.Millisecond})
	if len(res) != 1 || res[0].Impl != m || len(res[0].Ns) != 2 || !(res[0].Ns[0] > 0) {
		t.Fatalf("Run: %d results, want memmove's 2 samples: %+v", len(res), res)
	}
	if rate, unit := res[0].Rate(); !(rate > 0) || unit != "GB/s" {
		t.Errorf("rate %v %s", rate, unit)
	}
}

// TestGemvKernel checks the gemv kernel's shapes (both transposes of A in
// L2, in L3, beyond it and GPT-2's embedding), its work (the bytes of A,
// the kernel being read-bound), and that it runs on every Impl with a
// Gemv and only those.
func TestGemvKernel(t *testing.T) {
	k := kernelByName(t, "gemv")
	if k.Bound != MemoryBound || !k.ReadBound || k.Short != "512x512" {
		t.Errorf("gemv: bound %v, read-bound %v, short %q", k.Bound, k.ReadBound, k.Short)
	}
	for _, tc := range []struct {
		name  string
		m, n  int
		trans bool
	}{{"512x512", 512, 512, false}, {"512x512_T", 512, 512, true}, {"2048x2048_T", 2048, 2048, true},
		{"8192x8192", 8192, 8192, false}, {"50257x768_T", 50257, 768, true}, {"768x50257", 768, 50257, false}} {
		s, ok := k.Shape(tc.name)
		if !ok || s.M != tc.m || s.N != tc.n || s.TransA != tc.trans {
			t.Fatalf("gemv shape %s: %+v (found %v)", tc.name, s, ok)
		}
		if w := k.Work(s); w.Bytes != 4*float64(tc.m*tc.n) || w.Flops != 2*float64(tc.m*tc.n) {
			t.Errorf("gemv %s: work %+v", tc.name, w)
		}
	}
	s, _ := k.Shape("512x512_T")
	if k.Setup(s, Memmove()) != nil {
		t.Errorf("gemv runs on memmove")
	}
	for _, im := range OursAll() {
		op := k.Setup(s, im)
		if op == nil {
			t.Fatalf("gemv does not run on %s", im.Name)
		}
		op()
	}
}

// TestReadRate checks that the streaming read measures a positive, finite
// rate on one and two goroutines, and that bad arguments panic.
func TestReadRate(t *testing.T) {
	p := kernels.Implementations()[0]
	x := make([]float32, 1<<16)
	for _, im := range kernels.Implementations() {
		for _, threads := range []int{1, 2} {
			if r := ReadRate(im, x, threads); !(r > 0) || r > 1e15 {
				t.Errorf("%s: ReadRate(%d threads) = %v", im.Name(), threads, r)
			}
		}
	}
	for _, threads := range []int{0, len(x) + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ReadRate(%d threads) did not panic", threads)
				}
			}()
			ReadRate(p, x, threads)
		}()
	}
	if n := len(ReadBuffer()); 4*n != streamBytes(kernels.CPU().L3) {
		t.Errorf("ReadBuffer holds %d bytes, want %d", 4*n, streamBytes(kernels.CPU().L3))
	}
	for _, bytes := range []int{0, 4, 4 << 20, 4<<20 + 12} {
		x := ReadBufferOf(bytes)
		if len(x) != bytes/4 {
			t.Errorf("ReadBufferOf(%d) holds %d floats, want %d", bytes, len(x), bytes/4)
		}
		for i, v := range x {
			if v != float32(i&7) {
				t.Errorf("ReadBufferOf(%d)[%d] = %v, want %d", bytes, i, v, i&7)
				break
			}
		}
	}
}

// TestLowbitGemvKernels checks the GEMV kernels over bf16 and int8
// weights: read-bound, the bytes of the weights as stored (2 a weight;
// 36 per group of 32), and runnable on every implementation but memmove.
func TestLowbitGemvKernels(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		bytes  float64 // per weight, at K = 768 (24 whole groups)
	}{{"gemvbf16", 2}, {"gemvint8", 36.0 / 32}} {
		k := kernelByName(t, tc.kernel)
		if k.Bound != MemoryBound || !k.ReadBound || k.Short != "768x768" {
			t.Errorf("%s: bound %v, read-bound %v, short %q", tc.kernel, k.Bound, k.ReadBound, k.Short)
		}
		for _, name := range []string{"768x768", "3072x768", "50257x768"} {
			s, ok := k.Shape(name)
			if !ok {
				t.Fatalf("%s has no shape %s", tc.kernel, name)
			}
			if w := k.Work(s); w.Bytes != tc.bytes*float64(s.M*s.N) || w.Flops != 2*float64(s.M*s.N) {
				t.Errorf("%s %s: work %+v", tc.kernel, name, w)
			}
		}
		s, _ := k.Shape("768x768")
		if k.Setup(s, Memmove()) != nil {
			t.Errorf("%s runs on memmove", tc.kernel)
		}
		for _, im := range OursAll() {
			op := k.Setup(s, im)
			if op == nil {
				t.Fatalf("%s does not run on %s", tc.kernel, im.Name)
			}
			op()
		}
	}
}
