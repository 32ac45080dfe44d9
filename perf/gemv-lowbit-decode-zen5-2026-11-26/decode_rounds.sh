#!/bin/bash
# usage: decode_rounds.sh OUTDIR ROUNDS CPUS
out=$1; rounds=$2; cpus=$3
mkdir -p $out
for r in $(seq 1 $rounds); do
  for isa in avx512 avx2; do
    SIMDGPT_ISA=$isa /tmp/gpt.test -test.run '^$' -test.bench 'GPT2Decode/' -test.benchtime 60x -test.cpu $cpus >> $out/decode-$isa.txt 2>&1
  done
  /tmp/kb -kernels gemvint8 -impls avx512 -shapes 768x768 -count 1 -time 10ms 2>&1 | grep "read bw" >> $out/readbw-procs1.txt
  /tmp/kb -kernels gemvint8 -impls avx512 -shapes 768x768 -count 1 -time 10ms -procs 2 2>&1 | grep "read bw" >> $out/readbw-procs2.txt
done
