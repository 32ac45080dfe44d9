#!/bin/bash
# Interleaved rounds, one thread: GPT2DecodeBatch (f32 n=1, n=8 in passes
# of 4, n=8 at once; int8 n=1, n=8), then GPT2Decode greedy and sampled.
cd /tmp/sampler-bench
for round in 1 2 3 4 5 6; do
  for pat in 'GPT2DecodeBatch/^weights=f32$/' 'GPT2DecodeBatch/^weights=int8$/' 'GPT2Decode/^ctx=64$' 'GPT2Decode/^sample=(top_k40|top_p0.95)$/^ctx=64$' 'GPT2Decode/^weights=int8$/^ctx=64$' 'GPT2Decode/^weights=int8$/^sample=(top_k40|top_p0.95)$/^ctx=64$'; do
    ./gpt.test -test.run '^$' -test.bench "$pat" -test.benchtime 60x -test.cpu 1 2>&1 | grep '^Benchmark'
  done
done
