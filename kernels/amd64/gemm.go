//go:build amd64 && !purego

package amd64

import (
	"github.com/simdgpt/simdgpt/kernels/internal/blocked"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuinfo"
)

// The GEMM (and masked scores) of each set: the shared blocked driver over
// the generated kernel tables (gemm_kernels_amd64.go), blocked for this
// CPU's caches (blocked.BlockSizes gives kc 256, nc 512 for both on a
// 48 KiB L1 and 1 MiB L2). The last argument of New before the caches is
// mc, how many rows of A are packed at once.
var (
	caches     = cpuinfo.Read()
	gemmAVX512 = blocked.New(kernelsAVX512, 14*32, caches.L1D, caches.L2)
	gemmAVX2   = blocked.New(kernelsAVX2, 6*64, caches.L1D, caches.L2)
)
