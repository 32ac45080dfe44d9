package gpt

import (
	"fmt"

	"github.com/simdgpt/simdgpt/attention"
	"github.com/simdgpt/simdgpt/kernels"
)

// Precision is the arithmetic of a model's matrix products, whatever the
// format its weights are stored in (Weights).
//
// With PrecisionBF16 the products of many rows (training's forward and
// backward passes, evaluation, prompt processing) round both operands to
// bfloat16 and sum the products in float32 (kernels.GemmBF16Compute and
// its forms), as torch.autocast does on the CPU: the block's four
// projections, the LM head and their gradients, and attention's per-head
// products (attention's SetBF16Compute: the scores Q·Kᵀ and the weighted
// values P·V, and their gradients). Everything else stays float32:
// parameters, gradient sums, AdamW's state, embeddings, LayerNorm,
// attention's softmax and its gradient, GELU, the residual stream and the
// loss. Products of fewer than
// bf16MinRows rows (decoding a token, a few sequences at once) stay
// float32: they are bound by reading the weights, which bf16 compute does
// not shorten, and keep float32's accuracy.
type Precision uint8

const (
	PrecisionF32  Precision = iota // float32 products (the default)
	PrecisionBF16                  // bfloat16 operands, float32 sums
)

// bf16MinRows is the fewest rows a product computes in bfloat16 under
// PrecisionBF16 (see Precision).
const bf16MinRows = 16

var precisionNames = [...]string{PrecisionF32: "f32", PrecisionBF16: "bf16"}

// String returns p's name: "f32" or "bf16".
func (p Precision) String() string {
	if int(p) < len(precisionNames) {
		return precisionNames[p]
	}
	return fmt.Sprintf("Precision(%d)", p)
}

// ParsePrecision returns the precision named s ("f32" or "bf16").
func ParsePrecision(s string) (Precision, error) {
	for p, name := range precisionNames {
		if s == name {
			return Precision(p), nil
		}
	}
	return 0, fmt.Errorf("precision %q is not one of f32, bf16", s)
}

// MarshalText writes p's name, so TrainConfig's JSON says "bf16".
func (p Precision) MarshalText() ([]byte, error) {
	if int(p) >= len(precisionNames) {
		return nil, fmt.Errorf("gpt: %v is not a precision", p)
	}
	return []byte(p.String()), nil
}

// UnmarshalText reads a name written by MarshalText.
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := ParsePrecision(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// SetPrecision sets the arithmetic of the model's matrix products from
// the next Forward, Backward or decoded token on. It errs for a value
// that is not a precision. Products over int8 weights of fewer than
// int8MinRows rows (decoding) keep the int8 kernels under either
// precision; those of more rows multiply the dequantized weights in the
// precision set.
func (m *Model) SetPrecision(p Precision) error {
	if int(p) >= len(precisionNames) {
		return fmt.Errorf("gpt: SetPrecision(%v): not a precision", p)
	}
	m.prec = p
	bf := p == PrecisionBF16
	for l := range m.lin {
		b := &m.lin[l]
		b.qkv.bf16, b.proj.bf16, b.fc.bf16, b.out.bf16 = bf, bf, bf, bf
	}
	m.head.bf16 = bf
	return nil
}

// Precision returns the arithmetic of the model's matrix products.
func (m *Model) Precision() Precision { return m.prec }

// SetKVCache sets the format of the key/value caches of the samplers
// made after the call (NewSampler, NewBatchSampler; those made before
// keep theirs): attention.KVFloat32 (the default) or attention.KVBF16,
// keys and values rounded to bfloat16 as they enter the cache, half its
// memory and half the bytes a decoded token reads from it at long
// contexts (see attention.KVBF16 for the arithmetic). It errs for a value
// that is not a format. WithWeights keeps the setting.
func (m *Model) SetKVCache(kv attention.KVCache) error {
	if kv != attention.KVFloat32 && kv != attention.KVBF16 {
		return fmt.Errorf("gpt: SetKVCache(%v): not a key/value cache format", kv)
	}
	m.kv = kv
	return nil
}

// KVCache returns the format of new samplers' key/value caches.
func (m *Model) KVCache() attention.KVCache { return m.kv }

// gemm is p.Gemm, or with bf16 p.GemmBF16Compute (bfloat16 operands).
func gemm(p *kernels.Impl, bf16 bool, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if bf16 {
		p.GemmBF16Compute(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p.Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// The bounds TestBF16StepAgainstF32 holds a bf16 training step to against
// float32's (the same forward and backward pass, one batch): the loss's
// relative difference and, per tensor, the largest gradient difference
// over the tensor's largest gradient. trainbench -check holds the step to
// them as well.
const (
	bf16LossTol = 1e-3
	bf16GradTol = 2.5e-2
)
