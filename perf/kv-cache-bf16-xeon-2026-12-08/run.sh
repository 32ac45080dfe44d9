#!/usr/bin/env bash
# rounds of BenchmarkGPT2Decode: each weight format at ctx 64 and 512 on
# float32 and bf16 key/value caches, one thread, interleaved.
set -eu
rounds=$1 bin=$2 out=$3
cd "$(dirname "$0")/../../gpt"
for r in $(seq "$rounds"); do
  for f in f32 bf16 int8; do
    if [ $f = f32 ]; then base='GPT2Decode/ctx=(64|512)$'; else base="GPT2Decode/weights=$f/ctx=(64|512)\$"; fi
    for pat in "$base" "GPT2Decode/kv=bf16/weights=$f/ctx=(64|512)\$"; do
      "$bin" -test.run '^$' -test.bench "$pat" -test.benchtime 60x -test.cpu 1 2>&1 | grep '^Benchmark' | sed "s/^/r$r /" | tee -a "$out"
    done
  done
done
