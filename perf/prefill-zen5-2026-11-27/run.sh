#!/bin/sh
# GPT-2 124M prompt processing, one thread, prompts of 256 and 512 tokens.
# Run from the module root:
#   sh perf/prefill-zen5-2026-11-27/run.sh 5 perf/prefill-zen5-2026-11-27
#
# Part 1, simdgpt's four variants in interleaved rounds: each round is one
# run of BenchmarkGPT2Prefill (float32, precision=bf16, weights=bf16 with
# bf16 compute, weights=int8; one warm-up prompt, then one timed),
# tokens per CPU-second. ours.txt.
# Part 2, PyTorch beside simdgpt: trainbench -prefill -rounds N for each
# peer, simdgpt and PyTorch alternating within each round (fp32 against
# float32; autocast against precision=bf16; bf16 matrices against
# weights=bf16), one trainbench process each, one after another (each
# writes and loads the 500 MB of random weights once). torch-*.txt.
set -e
rounds=${1:-5}
out=${2:-.}
go test -c -o /tmp/gpt-prefill.test ./gpt
go build -o /tmp/trainbench-prefill ./cmd/trainbench
{
  grep -m1 'model name' /proc/cpuinfo
  for r in $(seq 1 "$rounds"); do
    echo "=== round $r $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
    /tmp/gpt-prefill.test -test.run '^$' -test.bench 'GPT2Prefill' -test.benchtime 1x -test.cpu 1
  done
} > "$out/ours.txt" 2>&1
for v in "f32 f32" "bf16 f32" "bf16 bf16"; do
  set -- $v
  f="$out/torch-precision=$1-weights=$2.txt"
  echo "start $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" > "$f"
  /tmp/trainbench-prefill -prefill -prompt 256,512 -rounds "$rounds" -threads 1 -precision "$1" -weights "$2" -require-torch -check >> "$f" 2>&1
  echo "end $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >> "$f"
done
# Part 3: part 2 again with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset
# for the trainbench process (and so PyTorch's): this machine sets them to
# Haswell and 512, which holds Debian's OpenBLAS 0.3.21 (torch's float32
# products, attention's too with bf16 matrices) to its AVX2 kernels;
# unset, it picks its Cooperlake (AVX-512) kernels
# (openblas_get_corename). torch-openblas-auto-*.txt.
for v in "f32 f32" "bf16 f32" "bf16 bf16"; do
  set -- $v
  f="$out/torch-openblas-auto-precision=$1-weights=$2.txt"
  echo "start $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" > "$f"
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/trainbench-prefill -prefill -prompt 256,512 -rounds "$rounds" -threads 1 -precision "$1" -weights "$2" -require-torch -check >> "$f" 2>&1
  echo "end $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >> "$f"
done
