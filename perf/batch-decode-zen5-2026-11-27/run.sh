#!/bin/bash
# Interleaved rounds, one thread, before (the parent commit's gpt test
# binary) and after (this one's). Build the binaries with
#   git checkout BASE && go test -c -o $DIR/gpt.before.test ./gpt/
#   git checkout HEAD && go test -c -o $DIR/gpt.after.test ./gpt/
# Usage: run.sh DIR ROUNDS STEPS SET > rounds.txt, SET one of
#   main:    GPT2DecodeBatch (f32 and int8, n = 1 and 8), GPT2Decode
#            greedy f32 and int8, sampled (top_k 40, top_p 0.95) f32,
#            context 64 (two processes per binary and round);
#   int8sampled: GPT2Decode int8 sampled (top_k 40, top_p 0.95), context 64.
# A pattern matches sub-benchmarks of one depth only: go test reports no
# result for a benchmark the pattern has more levels than.
dir=${1:-/tmp/batch8}
rounds=${2:-5}
steps=${3:-20}
case ${4:-main} in
main) pats=('^BenchmarkGPT2Decode$/^ctx=64$'
            '^BenchmarkGPT2Decode(Batch)?$/^(weights=(f32|int8)|sample=(top_k40|top_p0.95))$/^(ctx=64|n=(1|8))$') ;;
int8sampled) pats=('^BenchmarkGPT2Decode$/^weights=int8$/^sample=(top_k40|top_p0.95)$/^ctx=64$') ;;
esac
cd "$dir" || exit 1
for round in $(seq "$rounds"); do
  for bin in before after; do
    echo "# round $round $bin $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    for pat in "${pats[@]}"; do
      ./gpt.$bin.test -test.run '^$' -test.bench "$pat" -test.benchtime ${steps}x -test.cpu 1 2>&1 | grep '^Benchmark' | sed "s/^/$bin /"
    done
  done
done
echo "# end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
