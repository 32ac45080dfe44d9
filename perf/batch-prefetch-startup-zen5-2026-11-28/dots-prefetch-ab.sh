#!/bin/bash
cd /tmp
for r in $(seq $1); do
  echo "# round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for v in old new; do
    ./gpt_$v.test -test.run '^$' -test.bench '^BenchmarkGPT2DecodeBatch$/^weights=f32$/^n=(1|8)$' -test.benchtime 30x -test.cpu 1 2>&1 | grep '^Benchmark' | sed "s/^/$v /"
  done
done
