package gemm

// GroupedCols is the number of columns of op(B) the low-bit packing
// kernels of this architecture's kernel sets convert at a time
// (GroupedSource.PackBlocks; Family.PackBF16, lowbit.PackInt8Func): 4 on
// arm64, whose GEMM panels are 12 and 4 columns wide (four rows of W,
// one 4×4 transpose per 4 k steps).
const GroupedCols = 4
