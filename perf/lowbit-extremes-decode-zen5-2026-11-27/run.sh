#!/bin/sh
# Low-bit GPT-2 decoding before (tb_old: trainbench built at d851d14) and
# after (tb_new: built at e90689c, whose
# decoding code is that of 39a734a) the int8 driver's overflow
# recomputation and the bf16 pair kernel's exponent test, interleaved: one thread, weights bf16 and int8,
# both ISAs, contexts 64 and 512, simdgpt alone (trainbench measures the
# read bandwidth in the same run).
set -e
for r in 1 2 3 4; do for isa in avx512 avx2; do for w in bf16 int8; do for v in old new; do
  echo "### round $r isa $isa weights $w build $v"
  SIMDGPT_ISA=$isa GOMAXPROCS=1 ./tb_$v -decode -no-torch -weights $w -ctx 64,512 -tokens 48 -rounds 1 -threads 1
done; done; done; done
