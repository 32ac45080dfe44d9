#!/bin/sh
# ab-rounds.sh ROUNDS BIN...: interleaved rounds of BenchmarkGemmBF16Compute,
# each shape (SHAPES, default all five) the bfloat16 product of every kernels
# test binary given (tagged by its name), then the first binary's float32
# Gemm and peak loop.
rounds=$1; shift
for r in $(seq "$rounds"); do
	for s in ${SHAPES:-m512_n512_k512 m1024_n1024_k1024 m2048_n2048_k2048 m2048_n1152_k384 m2048_n1536_k384}; do
		for v in "$@"; do
			$v -test.run '^$' -test.bench "GemmBF16Compute/$s/bf16\$" -test.benchtime 3x | grep '^Benchmark' | sed "s|^|$(basename $v .test) |"
		done
		$1 -test.run '^$' -test.bench "GemmBF16Compute/$s/f32\$" -test.benchtime 3x | grep '^Benchmark' | sed "s/^/f32 /"
		$1 -test.run '^$' -test.bench 'GemmBF16Compute/peak/bf16$' -test.benchtime 20x | grep '^Benchmark' | sed "s/^/peak /"
	done
done
