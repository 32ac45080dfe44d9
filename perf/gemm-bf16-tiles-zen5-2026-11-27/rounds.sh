#!/bin/sh
# rounds.sh ROUNDS BASE.test NEW.test: interleaved rounds, each with, per
# shape, BenchmarkGemmBF16Compute of both kernels test binaries (the order
# alternating between rounds), the new binary's float32 Gemm and the bfloat16
# peak loop, then torch.mm on bf16 tensors over the same shapes (one thread:
# the script pins OpenBLAS/OMP threads to --threads 1), and the load average.
rounds=$1 base=$2 new=$3
dir=$(dirname "$0")
for r in $(seq "$rounds"); do
	echo "round $r $(cut -d' ' -f1-3 /proc/loadavg)"
	for s in m512_n512_k512 m1024_n1024_k1024 m2048_n2048_k2048 m2048_n1152_k384 m2048_n1536_k384; do
		if [ $((r % 2)) = 1 ]; then order="$base $new"; else order="$new $base"; fi
		for v in $order; do
			tag=new
			[ "$v" = "$base" ] && tag=base
			$v -test.run '^$' -test.bench "GemmBF16Compute/$s/bf16\$" -test.benchtime 3x | grep '^Benchmark' | sed "s|^|$tag |"
		done
		$new -test.run '^$' -test.bench "GemmBF16Compute/$s/f32\$" -test.benchtime 2x | grep '^Benchmark' | sed "s/^/new /"
		$new -test.run '^$' -test.bench 'GemmBF16Compute/peak/bf16$' -test.benchtime 20x | grep '^Benchmark' | sed "s/^/new /"
	done
	/usr/bin/python3 "$dir/../../bench/torch/mm_bf16.py" --dtypes bf16 --rounds 1 --time 0.5 --threads 1 \
		--shapes sq512,sq1024,sq2048,2048x384x1152,2048x384x1536 | grep -v '^#' | sed "s/^/torch /"
done
