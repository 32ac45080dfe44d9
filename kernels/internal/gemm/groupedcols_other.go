//go:build !arm64

package gemm

// GroupedCols is the number of columns of op(B) the low-bit packing
// kernels of this architecture's kernel sets convert at a time
// (GroupedSource.PackBlocks; Family.PackBF16, lowbit.PackInt8Func): 16
// on amd64, whose GEMM panels are multiples of 16 columns wide (16 rows
// of W, one ZMM or two YMM registers across).
const GroupedCols = 16
