#!/bin/sh
# nanoGPT's "baby" configuration on Opticks, once in float32 and once in
# bf16 compute, one thread each (Zen 5, 2026-11-27; the f32 run shared the
# machine with more load, which changes its speed, not its losses).
O="$(go env GOROOT)/src/testdata/Isaac.Newton-Opticks.txt"
for p in f32 bf16; do
	go run ./cmd/tinygpt train --data "$O" --n_layers 4 --n_heads 4 --d_model 128 --block_size 64 --batch_size 12 \
		--max_iters 2000 --lr 1e-3 --eval_interval 500 --eval_iters 50 --threads 1 --precision $p --checkpoint_dir ck-$p > train-$p.txt
done
