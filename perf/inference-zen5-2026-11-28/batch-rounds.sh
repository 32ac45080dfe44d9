#!/bin/bash
# usage: rounds.sh ROUNDS STEPS
cd "${DIR:-/tmp/m1}"
for r in $(seq $1); do
  echo "# round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  ./gpt.test -test.run '^$' -test.bench '^BenchmarkGPT2DecodeBatch$/^weights=(f32|int8)$/^n=(1|8)$' -test.benchtime ${2}x -test.cpu 1 2>&1 | grep '^Benchmark'
  ./gpt.test -test.run '^$' -test.bench '^BenchmarkGPT2Decode$/^ctx=64$' -test.benchtime ${2}x -test.cpu 1 2>&1 | grep '^Benchmark'
  ./gpt.test -test.run '^$' -test.bench '^BenchmarkGPT2Decode$/^(sample=(top_k40|top_p0.95))$/^ctx=64$' -test.benchtime ${2}x -test.cpu 1 2>&1 | grep '^Benchmark'
  ./gpt.test -test.run '^$' -test.bench '^BenchmarkGPT2Decode$/^weights=int8$/^ctx=64$' -test.benchtime ${2}x -test.cpu 1 2>&1 | grep '^Benchmark'
  ./gpt.test -test.run '^$' -test.bench '^BenchmarkGPT2Decode$/^weights=int8$/^sample=(top_k40|top_p0.95)$/^ctx=64$' -test.benchtime ${2}x -test.cpu 1 2>&1 | grep '^Benchmark'
done
echo "# end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
