// Package attention is the heads of causal self-attention over the
// simdgpt kernels: given each position's query, key and value (qkv, the
// caller's projection of its input), it computes the heads' outputs y
// (the input of the caller's output projection), with a single-head and
// a multi-head layer, forward and backward passes for training,
// incremental decoding with a key/value cache for sampling, and a fused
// inference forward that never builds a T×T matrix. The projections
// around the heads, in whatever format their weights are, belong to the
// caller (package gpt's blocks).
//
// # Jobs
//
// A layer's three jobs are three types, each with its own state, sharing
// the layer's shape (C, H, D = C/H, the score scale) and its kernel
// implementation:
//
//   - Layer (NewSingleHead, NewMultiHead): training. Forward keeps the
//     probabilities Backward differentiates and Probs shows.
//   - Decoder (Layer.NewDecoder, NewDecoderKV): sampling, one sequence
//     with a key/value cache (float32, or bfloat16: KVCache), a prompt
//     then one token per Decode call.
//   - Fused (Layer.NewFused): inference on whole sequences with an online
//     softmax, no T×T matrix.
//
// Decoding and fused inference never disturb what a Layer's Forward kept.
// No job copies qkv or y: the kernels read and write the caller's slices.
//
// # Math
//
// qkv is [B,T,3C] row-major: Q, K and V side by side, each [B,T,C] with
// leading dimension 3C (for a transformer block, qkv = x·WQKV + BQKV).
//
//	S_h = scale·Q_h·K_hᵀ + mask    per batch element and head h, T×T
//	P_h = softmax(S_h) row-wise    [B,H,T,T] (Probs)
//	Y_h = P_h·V_h                  heads concatenated back to y [B,T,C]
//
// The mask sets S[i,j] = -Inf for j > i (a position sees itself and the
// past), so masked probabilities are exactly 0. A single-head layer uses
// Q, K and V whole and scale = 1/sqrt(C). A multi-head layer with H heads
// needs C = H·D and reads Q, K and V as [B,T,H,D] (head h is columns
// h·D..h·D+D-1 of each), with scale = 1/sqrt(D); no data is copied, the
// kernels read each head in place through leading dimensions. With H = 1
// the two layers compute the same thing. Backward maps dL/dy to dL/dqkv.
//
// # Kernels and speed
//
// Every kernel call goes through the layer's *kernels.Impl: kernels.Default()
// unless the layer was made with WithImpl, so a program (or a test) can
// run layers on several implementations side by side.
//
// The per-head work (MaskedScores, Softmax, Gemm,
// SoftmaxBackward) is spread over batch × heads (and, in Fused, query
// blocks) on the module's parallel runtime (internal/parallel), which
// never runs more than GOMAXPROCS goroutines at once however the calls
// nest: layers of several model replicas run at the same time share one
// budget. Every (batch, head) item is computed by the same sequence of
// kernel calls whichever goroutine runs it, so results do not depend on
// the number of goroutines beyond what Gemm itself documents
// (deterministic for a given implementation and GOMAXPROCS). The causal
// structure is used: rows are processed in blocks and a block never
// touches the keys after its last row.
//
// Each type keeps a workspace that grows on first use and is then reused:
// Layer.Forward, Layer.Backward, Decoder.Decode and Fused.Forward allocate
// nothing once warm.
//
// # Arguments
//
// Every size and slice length is checked before any kernel runs; a
// mistake panics with a message naming the method, the argument and the
// numbers, e.g. "attention.Layer.Forward: len(y) = 100, want >= b*t*C = 2*8*16 = 256".
package attention
