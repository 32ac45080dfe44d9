#!/bin/bash
set -x
out=/tmp/final; rm -rf $out; mkdir -p $out
cd /work/main
(cd kernels && go test -c -o /tmp/kern.test .)
(cd gpt && go test -c -o /tmp/gpt.test .)
go build -o /tmp/kb ./cmd/kernelbench
go build -tags openblas -o /tmp/kb_ob ./cmd/kernelbench
go build -o /tmp/tb ./cmd/trainbench
lscpu > $out/lscpu.txt
for r in 1 2 3; do
  for isa in avx512 avx2; do
    (cd kernels && SIMDGPT_ISA=$isa /tmp/kern.test -test.run '^$' -test.bench 'GemvWeights' -test.benchtime 300ms >> $out/gemvweights-$isa.txt 2>&1)
  done
done
/tmp/decode_rounds.sh $out/decode 3 1,2
/tmp/kb_ob -kernels gemv -impls avx2,avx512,openblas,openblas-avx2 -count 6 > $out/kernelbench-gemv-openblas.md 2>&1
/tmp/tb -decode -ctx 64,512 -tokens 32 -rounds 3 -threads 1,2 -check -require-torch > $out/trainbench-decode-f32.txt 2>&1
/tmp/tb -decode -weights bf16 -ctx 64,512 -tokens 32 -rounds 3 -threads 1 -check -require-torch > $out/trainbench-decode-bf16.txt 2>&1
/tmp/tb -decode -weights int8 -ctx 64 -tokens 32 -rounds 3 -threads 1 -check -require-torch > $out/trainbench-decode-int8.txt 2>&1
SIMDGPT_ISA=avx2 /tmp/tb -decode -ctx 64 -tokens 32 -rounds 3 -threads 1 -require-torch > $out/trainbench-decode-f32-avx2.txt 2>&1
echo done > $out/DONE
