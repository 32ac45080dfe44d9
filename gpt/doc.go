// Package gpt is TinyGPT: a small GPT (token and position embeddings,
// pre-LayerNorm blocks of causal self-attention and a GELU MLP, a final
// LayerNorm and a linear head) trained on the CPU with simdgpt's kernels.
// It holds the model, its layers' forward and backward passes, the AdamW
// optimizer with a warm-up and cosine learning-rate schedule, checkpoints
// and sampling. All parameters live in one flat []float32 (so do their
// gradients and the optimizer's moments), which keeps the optimizer and the
// checkpoints simple.
package gpt
