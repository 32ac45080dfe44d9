#!/bin/sh
# As run.sh, with the order of the two builds alternating between rounds
# (new first in odd rounds), to cancel an order effect.
set -e
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="new old"; else order="old new"; fi
  for isa in avx2 avx512; do for w in bf16 int8; do for v in $order; do
    echo "### round $r isa $isa weights $w build $v"
    SIMDGPT_ISA=$isa GOMAXPROCS=1 ./tb_$v -decode -no-torch -weights $w -ctx 64,512 -tokens 48 -rounds 1 -threads 1
  done; done; done
done
