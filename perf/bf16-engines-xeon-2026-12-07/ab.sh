#!/bin/sh
# Two trainbench binaries alternated, two rounds: bf16 training (config b,
# against PyTorch under autocast), float32 training, prompts with
# precision=bf16 (against autocast) and with bf16 weights, float32 prompts,
# bf16-weight decoding on one and two threads. Run from the module root.
#   go build -o OLD ./cmd/trainbench   (at the commit before)
#   perf/bf16-engines-xeon-2026-12-07/ab.sh OLD NEW OUTDIR
set -eu
OLD=$1 NEW=$2 O=$3
mkdir -p "$O"
for r in 1 2; do
  for b in old new; do
    if [ $b = old ]; then T=$OLD; else T=$NEW; fi
    $T -config b -steps 3 -rounds 2 -threads 1 -precision bf16 > "$O/train-b-bf16-$b-r$r.txt" 2>&1
  done
  $NEW -config b -steps 3 -rounds 2 -threads 1 -precision f32 -no-torch > "$O/train-b-f32-r$r.txt" 2>&1
  for b in old new; do
    if [ $b = old ]; then T=$OLD; else T=$NEW; fi
    $T -prefill -prompt 256,512 -rounds 2 -threads 1 -precision bf16 > "$O/prefill-bf16-$b-r$r.txt" 2>&1
    $T -prefill -prompt 256,512 -rounds 2 -threads 1 -weights bf16 -no-torch > "$O/prefill-wbf16-$b-r$r.txt" 2>&1
  done
  $NEW -prefill -prompt 256,512 -rounds 2 -threads 1 -no-torch > "$O/prefill-f32-r$r.txt" 2>&1
  for b in old new; do
    if [ $b = old ]; then T=$OLD; else T=$NEW; fi
    $T -decode -no-torch -weights bf16 -ctx 64,512 -tokens 32 -rounds 2 -threads 1,2 > "$O/decode-bf16-$b-r$r.txt" 2>&1
  done
done
