#!/bin/bash
# Run from the repository root: DIR=/tmp/s9 sh perf/inference-probes-zen5-2026-11-28/battery.sh
# DIR holds gpt.test (go test -c ./gpt) and tg-head (go build ./cmd/tinygpt);
# /tmp/load2/{f32,int8} hold GPT-2-shaped checkpoints (tinygpt convert).
root=$(pwd)
dir=${DIR:-/tmp/s9}
cd "$dir"
grep -m1 'model name' /proc/cpuinfo > battery-info.txt
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> battery-info.txt
# Many samples at once: 6 rounds of 40 steps.
DIR=$dir bash "$root/perf/inference-zen5-2026-11-28/batch-rounds.sh" 6 40 > batch.txt 2>&1
# int8 against f32 prompts, both ISAs alternating.
for r in 1 2 3 4 5; do
  for isa in avx512 avx2; do
    echo "== round $r isa $isa load $(cut -d' ' -f1 /proc/loadavg) $(date -u +%H:%M:%S)"
    SIMDGPT_ISA=$isa ./gpt.test -test.run '^$' -test.bench 'GPT2Prefill/(f32|weights=int8)/prompt=(256|512)' -test.benchtime 3x -test.cpu 1 | grep Bench
  done
done > prefill.txt 2>&1
# Whole tinygpt sample -n 256, f32 and int8 checkpoints, 8 rounds.
FORMATS="f32 int8" NS=256 bash "$root/perf/startup-zen5-2026-11-27/run.sh" 8 "$dir/startup.txt" "$dir" /tmp/load2 head 2> startup-err.txt
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> battery-info.txt
