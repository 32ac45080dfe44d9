#!/bin/bash
# The measurements of 2026-11-26 on Zen 5 (GEMM tiles, Gemv, decoding, training step), from the module root.
set -e
out=perf/gemm-gemv-decode-trainstep-zen5-2026-11-26
go build -tags openblas -o /tmp/kb ./cmd/kernelbench
go build -o /tmp/trainbench ./cmd/trainbench
go test -c -o /tmp/gpt.test ./gpt
# GEMM: every tile side by side, and against OpenBLAS (Haswell kernels here).
/tmp/kb -kernels gemm -impls avx2/6x16,avx2/4x24,avx512/14x32,avx512/8x48,openblas -count 4 -time 40ms -procs 1 -o $out/kernelbench-gemm-tiles-N.txt > $out/kernelbench-gemm-tiles-N.md
# GPT-2 decoding against PyTorch at one and two threads, both ISAs.
/tmp/trainbench -decode -ctx 64,512 -tokens 32 -rounds 3 -threads 1,2 -check -require-torch > $out/trainbench-decode-f32.txt
SIMDGPT_ISA=avx2 /tmp/trainbench -decode -ctx 64,512 -tokens 32 -rounds 3 -threads 1,2 -require-torch > $out/trainbench-decode-f32-avx2.txt
# Low-bit decoding, both ISAs alternated, one and two threads.
for r in 1 2 3; do
  for isa in avx512 avx2; do
    SIMDGPT_ISA=$isa /tmp/gpt.test -test.run '^$' -test.bench 'GPT2Decode/' -test.benchtime 60x -test.cpu 1,2 >> $out/decode-$isa.txt
  done
done
# Training step against PyTorch, one thread.
/tmp/trainbench -config a -rounds 4 -threads 1 -check > $out/trainbench-a.txt
/tmp/trainbench -config b -rounds 3 -steps 3 -threads 1 > $out/trainbench-b.txt
SIMDGPT_ISA=avx2 /tmp/trainbench -config a -rounds 4 -threads 1 > $out/trainbench-a-avx2.txt
SIMDGPT_ISA=avx2 /tmp/trainbench -config b -rounds 3 -steps 3 -threads 1 > $out/trainbench-b-avx2.txt
