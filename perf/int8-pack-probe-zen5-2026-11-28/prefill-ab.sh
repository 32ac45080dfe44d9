#!/bin/bash
# prefill-ab.sh ROUNDS ISA OLD NEW: GPT2Prefill f32 and weights=int8 at 256 and 512 tokens, one thread,
# the binaries OLD and NEW alternating round by round under SIMDGPT_ISA=ISA.
rounds=$1 isa=$2 old=$3 new=$4
for r in $(seq 1 $rounds); do
  for v in old new; do
    bin=$old; [ $v = new ] && bin=$new
    echo "== $v round $r isa $isa load $(cut -d' ' -f1 /proc/loadavg) $(date -u +%H:%M:%S)"
    SIMDGPT_ISA=$isa $bin -test.run '^$' -test.bench 'GPT2Prefill/(f32|weights=int8)/prompt=(256|512)' -test.benchtime 3x -test.cpu 1 | grep Bench
  done
done
