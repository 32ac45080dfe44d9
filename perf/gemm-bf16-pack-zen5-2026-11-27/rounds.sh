#!/bin/sh
# Interleaved rounds of BenchmarkGemmBF16Compute (kernels), the driver
# before and after B's banded packing: in each round and shape, the
# bfloat16 product of the old binary (tag base), of the new (tag new),
# then the float32 Gemm and the bfloat16 peak loop of the new, each a
# separate run, one goroutine. Usage (from the repo root):
#   git worktree add /tmp/bf16-base eb4dd59
#   (cd /tmp/bf16-base && go test -c -o /tmp/kern-base.test ./kernels)
#   go test -c -o /tmp/kern-new.test ./kernels
#   perf/gemm-bf16-pack-zen5-2026-11-27/rounds.sh 12 > rounds.txt
#   python3 perf/gemm-bf16-pack-zen5-2026-11-27/summary.py rounds.txt
set -e
rounds=${1:-12}
for r in $(seq "$rounds"); do
	for s in m512_n512_k512 m1024_n1024_k1024 m2048_n2048_k2048 m2048_n1152_k384 m2048_n1536_k384; do
		for v in base new; do
			/tmp/kern-$v.test -test.run '^$' -test.bench "GemmBF16Compute/$s/bf16\$" -test.benchtime 3x | grep '^Benchmark' | sed "s/^/$v /"
		done
		/tmp/kern-new.test -test.run '^$' -test.bench "GemmBF16Compute/$s/f32\$" -test.benchtime 3x | grep '^Benchmark' | sed "s/^/new /"
		/tmp/kern-new.test -test.run '^$' -test.bench 'GemmBF16Compute/peak/bf16$' -test.benchtime 20x | grep '^Benchmark' | sed "s/^/new /"
	done
done
