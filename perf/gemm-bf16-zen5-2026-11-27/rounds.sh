#!/bin/sh
# Interleaved rounds of BenchmarkGemmBF16Compute (kernels): in each round,
# every shape's bfloat16 product, then its float32 Gemm, then the
# bfloat16 peak loop, each a separate run of one compiled test binary,
# one goroutine. Usage: rounds.sh ROUNDS > out.txt
set -e
rounds=${1:-8}
cd "$(dirname "$0")/../.."
go test -c -o /tmp/kernels-bf16.test ./kernels
for r in $(seq "$rounds"); do
	for s in m512_n512_k512 m1024_n1024_k1024 m2048_n2048_k2048 m2048_n1152_k384 m2048_n1536_k384; do
		for kind in bf16 f32; do
			/tmp/kernels-bf16.test -test.run '^$' -test.bench "GemmBF16Compute/$s/$kind\$" -test.benchtime 3x | grep '^Benchmark'
		done
		/tmp/kernels-bf16.test -test.run '^$' -test.bench 'GemmBF16Compute/peak/bf16$' -test.benchtime 20x | grep '^Benchmark'
	done
done
