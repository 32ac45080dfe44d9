// Package gpt is TinyGPT: a small GPT (token and position embeddings,
// pre-LayerNorm blocks of causal self-attention and a GELU MLP, a final
// LayerNorm and a linear head, or with Config.TieEmbeddings the transposed
// token embedding as the head, GPT-2's layout) trained on the CPU with
// simdgpt's kernels.
// It holds the model, its layers' forward and backward passes, the AdamW
// optimizer with a warm-up and cosine learning-rate schedule, checkpoints
// and sampling. All parameters live in one flat []float32 (so do their
// gradients and the optimizer's moments), which keeps the optimizer and the
// checkpoints simple; the layout of that vector (names, shapes, order) is
// one table (Config.Tensors), which is also what checkpoints store.
//
// A block is one function (blockForward) for training, evaluation and
// decoding: the model's linears do every product, its four projections
// and the LM head, in the model's weight format (float32, or bf16 and int8
// after WithWeights), and package attention does the heads between the
// query/key/value projection and the output projection. Training's
// Forward keeps what Backward needs; evaluation (EvalSequential) runs an
// inference forward that keeps nothing, with fused attention and one
// pass's activations; a Sampler decodes with a key/value cache.
//
// LoadGPT2 reads GPT-2 family checkpoints (Hugging Face safetensors or
// llm.c's gpt2_*.bin) into models with tied embeddings.
//
// A model computes with one kernel implementation, kernels.Default() unless
// New is given WithImpl, and runs its parallel work (the data-parallel
// replicas of a training step and the element-wise passes) on the module's
// one parallel runtime; results are bit-identical from run to run for a
// given implementation and GOMAXPROCS.
package gpt
