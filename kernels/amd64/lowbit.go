//go:build amd64 && !purego

package amd64

import "golang.org/x/sys/cpu"

// The kernels of the products over low-bit weights of each set
// (lowbit_amd64.s, from asm/gen/lowbit; their tables, lowbitAVX2 and
// lowbitAVX512, are generated in families_gen.go): 1 to 8 rows of A at a
// time. The avx512 set takes the YMM kernels for one row of A (decoding
// a token), which stream weights from memory at least as fast as ZMM ones
// on the CPUs measured (PERF.md, "GEMV with 16- and 8-bit weights"), and
// the ZMM kernels from two rows of A up, where they compute more per
// byte. Every Int8 kernel of both sets gives each element of C the one-row
// AVX2 kernel's result bit for bit (the ZMM ones hold two rows of W in the
// two halves of a register), so a row's int8 product does not depend on
// the set or on the rows of A computed with it. On CPUs with AVX512_BF16
// the avx512 set multiplies one row of A by BF16 weights with the pair
// kernel instead (see package kernels' low-bit products for its
// accuracy), two VDPBF16PS with a memory operand for every 64 bytes of
// weights, but on the classes of CPU whose VDPBF16PS is slower than
// converting (bf16DotAVX512, bf16RoundedRules).

// hasAVX512BF16 reports what the avx512 set's one-row BF16 product on
// VDPBF16PS needs besides hasAVX512: AVX512_BF16, and AVX512VL for the
// YMM forms of its EVEX instructions (every CPU with AVX512_BF16 has it).
var hasAVX512BF16 = hasAVX512 && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BF16
