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
