#!/bin/bash
# Interleaved rounds, one thread: GPT2Decode greedy and sampled (f32, int8,
# ctx=64), then GPT2DecodeBatch n=1 and n=8 (f32, int8).
cd /tmp/sampler-bench
for round in 1 2 3 4 5; do
  for pat in 'GPT2Decode/^ctx=64$' 'GPT2Decode/^sample=(top_k40|top_p0.95)$/^ctx=64$' 'GPT2Decode/^weights=int8$/^ctx=64$' 'GPT2Decode/^weights=int8$/^sample=(top_k40|top_p0.95)$/^ctx=64$' 'GPT2DecodeBatch/^weights=f32$/' 'GPT2DecodeBatch/^weights=int8$/'; do
    ./gpt.test -test.run '^$' -test.bench "$pat" -test.benchtime 60x -test.cpu 1 2>&1 | grep '^Benchmark'
  done
done
