#!/bin/bash
# The measurements of this folder, in order, from the repository's root:
#   go test -c -o /tmp/gpt-base.test ./gpt         # at ff18c13, before GemmDequantInt8
#   go test -c -o /tmp/kern-new3.test ./kernels/   # at f5a562c
#   go test -c -o /tmp/gpt-new3.test ./gpt         # at f5a562c
#   go build -o /tmp/trainbench ./cmd/trainbench   # the new read-bandwidth probe
out=perf/int8-pack-probe-zen5-2026-11-28
for r in 1 2 3 4 5 6; do for isa in avx512 avx2; do
  echo "== round $r isa $isa load $(cut -d' ' -f1 /proc/loadavg) $(date -u +%H:%M:%S)"
  SIMDGPT_ISA=$isa /tmp/kern-new3.test -test.run '^$' -test.bench 'GemmDequantInt8' -test.benchtime 3x | grep Bench
done; done > $out/gemmdequant-rounds.txt 2>&1
$out/prefill-ab.sh 6 avx512 /tmp/gpt-base.test /tmp/gpt-new3.test > $out/prefill-ab-avx512.txt 2>&1
$out/prefill-ab.sh 5 avx2 /tmp/gpt-base.test /tmp/gpt-new3.test > $out/prefill-ab-avx2.txt 2>&1
bash perf/batch-prefetch-startup-zen5-2026-11-28/decode-threads.sh > $out/decode-threads.txt 2>&1
