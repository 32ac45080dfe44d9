#!/bin/sh
# ab2.sh ROUNDS BASE.test NEW.test: BenchmarkGemmBF16Compute at 512³ and
# 2048×1152×384 only, 10 calls a sample, the binaries alternating (order
# swapped every round), with the load average.
rounds=$1 base=$2 new=$3
for r in $(seq "$rounds"); do
	echo "round $r $(cut -d' ' -f1-3 /proc/loadavg)"
	for s in m512_n512_k512 m2048_n1152_k384; do
		if [ $((r % 2)) = 1 ]; then order="$base $new"; else order="$new $base"; fi
		for v in $order; do
			tag=new
			[ "$v" = "$base" ] && tag=base
			$v -test.run '^$' -test.bench "GemmBF16Compute/$s/bf16\$" -test.benchtime 10x | grep '^Benchmark' | sed "s|^|$tag |"
		done
	done
done
