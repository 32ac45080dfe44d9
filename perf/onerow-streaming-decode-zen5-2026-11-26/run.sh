#!/usr/bin/env bash
# The measurements of 2026-11-26 on Zen 5: one-row kernels from memory and GPT-2 decoding. Run from the repository's root.
# Decoding, one thread, context 64, each weight format against PyTorch
# (bf16 and int8 against torch's bf16), both ISAs:
set -e
out=perf/onerow-streaming-decode-zen5-2026-11-26
go build -o /tmp/trainbench ./cmd/trainbench
for isa in avx512 avx2; do
  for w in f32 bf16 int8; do
    SIMDGPT_ISA=$isa /tmp/trainbench -decode -weights $w -ctx 64 -tokens 32 -rounds 3 -threads 1 | tee $out/trainbench-decode-$w-$isa.txt
  done
done
# The int8 one-row kernel's variants (wdots-exp-*.txt): apply
# wdots-experiments.patch to asm/gen/wdots/main.go (the variant list
# differed per file, see README.md), go generate ./kernels/amd64/, copy
# wdots_experiments_test.go.txt to kernels/amd64/exp_test.go, then
#   go test -run '^$' -bench 'Exp' -benchtime 300ms -cpu 1 ./kernels/amd64/   # 3 rounds
# Formats interleaved (ratios to f32 within a round), ours alone:
for r in 1 2 3; do for isa in avx512 avx2; do for w in f32 bf16 int8; do
  echo "## round $r $isa $w"; SIMDGPT_ISA=$isa /tmp/trainbench -decode -no-torch -weights $w -ctx 64 -tokens 64 -rounds 1 -threads 1
done; done; done 2>&1 | tee $out/decode-formats-interleaved.txt
# Where an int8 token's time goes (decode-int8-profile.txt: the timed
# decoding only, the prompt's prefill ignored):
go test -c -o /tmp/gpt.test ./gpt/
(cd gpt && /tmp/gpt.test -test.run '^$' -test.bench 'GPT2Decode/weights=int8/ctx=64$' -test.benchtime 600x -test.cpu 1 -test.cpuprofile /tmp/int8.prof)
go tool pprof -top -nodecount 25 -focus 'Sampler.*feed' -ignore 'Sampler.*Logits' /tmp/gpt.test /tmp/int8.prof
