#!/bin/bash
# Interleaved rounds of tinygpt's start-up (sample -n 0: the load and one
# token) and of a whole sample -n 256 (greedy), per checkpoint format and
# per binary, from a warm page cache (each file read with cat just before).
# usage: run.sh ROUNDS OUT BIN_DIR CKPT_DIR NAME...
#   BIN_DIR holds tg-NAME for each NAME (binaries of cmd/tinygpt);
#   CKPT_DIR holds hf/ (GPT-2's model.safetensors with its tokenizer files),
#   f32/, bf16/, int8/ (tinygpt convert --weights ... --out of one model).
#   FORMATS (default "hf f32 bf16 int8") and NS (default "0 256") in the
#   environment choose the checkpoint directories and the -n values.
# Each line of OUT: round binary format n wall_s user_s sys_s maxrss_kB load1
set -u
rounds=$1 out=$2 bins=$3 ck=$4
shift 4
for r in $(seq 1 "$rounds"); do
  for w in ${FORMATS:-hf f32 bf16 int8}; do
    f=$ck/$w/checkpoint.safetensors
    [ "$w" = hf ] && f=$ck/hf/model.safetensors
    for b in "$@"; do
      for n in ${NS:-0 256}; do
        cat "$f" >/dev/null
        l=$(cut -d' ' -f1 /proc/loadavg)
        /usr/bin/time -o /tmp/run-time.$$ -f "%e %U %S %M" "$bins/tg-$b" sample --checkpoint "$ck/$w" -n $n --temperature 0 >/dev/null 2>/tmp/run-err.$$ ||
          { echo "round $r $b $w $n failed: $(cat /tmp/run-err.$$)" >&2; exit 1; }
        echo "$r $b $w $n $(cat /tmp/run-time.$$) $l" >>"$out"
      done
    done
  done
done
rm -f /tmp/run-time.$$ /tmp/run-err.$$
