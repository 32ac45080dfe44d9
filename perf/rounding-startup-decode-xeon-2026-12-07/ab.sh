#!/bin/sh
# Two trainbench binaries alternated, three rounds: bf16 training (config b,
# simdgpt alone), float32 training, prompts with precision=bf16 and in
# float32; then the new binary's bf16 step against PyTorch under autocast.
# Run from the repository root.
#   go build -o OLD ./cmd/trainbench   (at the commit before)
#   perf/rounding-startup-decode-xeon-2026-12-07/ab.sh OLD NEW OUTDIR
set -eu
OLD=$1 NEW=$2 O=$3
mkdir -p "$O"
for r in 1 2 3; do
  for b in old new; do
    if [ $b = old ]; then T=$OLD; else T=$NEW; fi
    $T -config b -steps 3 -rounds 2 -threads 1 -precision bf16 -no-torch > "$O/train-b-bf16-$b-r$r.txt" 2>&1
  done
  $NEW -config b -steps 3 -rounds 2 -threads 1 -precision f32 -no-torch > "$O/train-b-f32-r$r.txt" 2>&1
  for b in old new; do
    if [ $b = old ]; then T=$OLD; else T=$NEW; fi
    $T -prefill -prompt 256,512 -rounds 1 -threads 1 -precision bf16 -no-torch > "$O/prefill-bf16-$b-r$r.txt" 2>&1
  done
  $NEW -prefill -prompt 256,512 -rounds 1 -threads 1 -no-torch > "$O/prefill-f32-r$r.txt" 2>&1
done
$NEW -config b -steps 3 -rounds 3 -threads 1 -precision bf16 > "$O/train-b-bf16-new-torch.txt" 2>&1
