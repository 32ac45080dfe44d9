#!/bin/sh
# The measurements of the pair kernel and decoding by format (run from the module root; scratch is a
# package holding the *_test.go.txt files renamed, with
# pair_experiments_amd64.s.txt as pv_amd64.s and its Go declarations).
set -e
go build -o /tmp/tb ./cmd/trainbench
go test -c -o /tmp/gpt.test ./gpt
# Cold one-row products (scratch benchmark).
for r in 1 2 3 4; do for isa in avx512 avx2; do
  SIMDGPT_ISA=$isa ./scratch.test -test.run XX -test.bench 'DP/.*/(base|dotshalf)$|Sum' -test.benchtime 300ms -test.cpu 1
done; done
# GPT-2 decoding, formats and ISAs interleaved, with ReadRate.
for r in 1 2 3 4 5; do for isa in avx512 avx2; do
  SIMDGPT_ISA=$isa ./scratch.test -test.run ReadRate -test.v
  for pat in 'GPT2Decode/ctx=64$' 'GPT2Decode/weights=bf16/ctx=64$' 'GPT2Decode/weights=int8/ctx=64$'; do
    SIMDGPT_ISA=$isa /tmp/gpt.test -test.run XX -test.bench "$pat" -test.benchtime 150x -test.cpu 1
  done
done; done
# trainbench, the same interleaving.
for r in 1 2 3 4 5; do for isa in avx512 avx2; do for w in f32 bf16 int8; do
  SIMDGPT_ISA=$isa GOMAXPROCS=1 /tmp/tb -decode -no-torch -weights $w -ctx 64 -tokens 64 -rounds 1 -threads 1
done; done; done
# Against PyTorch with bf16 matrices.
GOMAXPROCS=1 /tmp/tb -decode -weights bf16 -ctx 64,512 -tokens 32 -rounds 3 -threads 1 -check
