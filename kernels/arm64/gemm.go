//go:build arm64 && !purego

package arm64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// gemmNEON is the GEMM (and masked scores) of the neon set: the shared
// blocked driver over the generated kernel table (gemm_kernels_arm64.go),
// blocked for this CPU's caches (blocked.BlockSizes gives kc 256, nc 504
// on a 64 KiB L1 and 1 MiB L2); 8*48 rows of A are packed at once. Not
// tuned on hardware (see PERF.md).
var gemmNEON = func() *blocked.Driver {
	info := cpuinfo.Read()
	return blocked.New(kernelsNEON, 8*48, info.L1D, info.L2)
}()
