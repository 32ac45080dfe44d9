package gpt

import (
	"encoding/binary"
	"fmt"
	"io"
)

// llm.c's gpt2_*.bin: a header of 256 little-endian int32 (magic 20240326,
// version 3 for float32 or 5 for bfloat16 parameters, maxT, V, L, NH, C,
// Vp), then every parameter in llm.c's order, one kind of tensor for all
// layers at a time: wte [Vp,C], wpe [maxT,C], ln1w [L,C], ln1b [L,C],
// qkvw [L,3C,C], qkvb [L,3C], attprojw [L,C,C], attprojb [L,C], ln2w
// [L,C], ln2b [L,C], fcw [L,4C,C], fcb [L,4C], fcprojw [L,C,4C], fcprojb
// [L,C], lnfw [C], lnfb [C]. Matrices are out×in (PyTorch's Linear) and are
// transposed to this package's in×out on load; the rows of wte past V
// (llm.c pads the vocabulary to Vp) are skipped, so the model's vocabulary
// is V and its logits are those of the V real tokens.

const (
	llmcHeaderInts = 256
	llmcHeaderSize = 4 * llmcHeaderInts
	// Sanity limits of the header's shape (GPT-2 XL: maxT 1024, V 50257,
	// L 48, C 1600), which also keep every size below in int64.
	llmcMaxT      = 1 << 20
	llmcMaxV      = 1 << 24
	llmcMaxLayers = 1 << 12
	llmcMaxWidth  = 1 << 16
)

// llmcTensor is one kind of llm.c parameter: its name in llm.c, its
// elements per layer (or in all, for the per-model ones) and how it is
// read into the model.
type llmcTensor struct {
	name   string
	perLyr bool
	rows   int // out (the source's rows), for a transposed matrix
	cols   int // in; rows·cols elements, or cols for a vector
	field  func(w *weights, l int) []float32
	transp bool
}

// loadLLMC loads an llm.c model file of size bytes.
func loadLLMC(r io.ReaderAt, size int64, opts ...Option) (*Model, error) {
	if size < llmcHeaderSize {
		return nil, fmt.Errorf("llm.c checkpoint of %d bytes: shorter than its %d-byte header", size, llmcHeaderSize)
	}
	var hb [llmcHeaderSize]byte
	if _, err := r.ReadAt(hb[:], 0); err != nil {
		return nil, fmt.Errorf("reading the llm.c header: %v", err)
	}
	h := make([]int64, 8)
	for i := range h {
		h[i] = int64(int32(binary.LittleEndian.Uint32(hb[4*i:])))
	}
	version, maxT, V, L, NH, C, Vp := h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	var dt dtype
	switch version {
	case 3:
		dt = dtypeF32
	case 5:
		dt = dtypeBF16
	default:
		return nil, fmt.Errorf("llm.c checkpoint version %d: versions 3 (float32) and 5 (bfloat16) are read", version)
	}
	switch {
	case maxT < 1 || maxT > llmcMaxT:
		return nil, fmt.Errorf("llm.c header: maxT %d outside [1, %d]", maxT, llmcMaxT)
	case V < 1 || V > llmcMaxV:
		return nil, fmt.Errorf("llm.c header: V %d outside [1, %d]", V, llmcMaxV)
	case Vp < V || Vp > llmcMaxV:
		return nil, fmt.Errorf("llm.c header: padded vocabulary Vp %d outside [V=%d, %d]", Vp, V, llmcMaxV)
	case L < 1 || L > llmcMaxLayers:
		return nil, fmt.Errorf("llm.c header: L %d outside [1, %d]", L, llmcMaxLayers)
	case C < 1 || C > llmcMaxWidth:
		return nil, fmt.Errorf("llm.c header: C %d outside [1, %d]", C, llmcMaxWidth)
	case NH < 1 || C%NH != 0:
		return nil, fmt.Errorf("llm.c header: NH %d does not divide C %d", NH, C)
	}
	// All parameters, as llm.c counts them (with the padded vocabulary).
	params := Vp*C + maxT*C + L*(12*C*C+13*C) + 2*C
	if want := llmcHeaderSize + params*int64(dt.size); size != want {
		return nil, fmt.Errorf("llm.c checkpoint of %d bytes; its header (maxT %d, V %d, Vp %d, L %d, C %d, %s) needs %d", size, maxT, V, Vp, L, C, dt.name, want)
	}
	cfg := Config{Vocab: int(V), BlockSize: int(maxT), Layers: int(L), Heads: int(NH), Width: int(C), TieEmbeddings: true}
	m, err := newModel(cfg, opts...)
	if err != nil {
		return nil, err
	}
	c := int(C)
	tr := newTensorReader(bufferedSection(r, llmcHeaderSize, size-llmcHeaderSize), dt, 4*c)
	p := &m.p
	if err := tr.read("wte", p.wte); err != nil {
		return nil, err
	}
	if err := tr.skip("wte (padding rows)", (Vp-V)*C); err != nil {
		return nil, err
	}
	if err := tr.read("wpe", p.wpe); err != nil {
		return nil, err
	}
	blk := func(f func(b *blockWeights) []float32) func(w *weights, l int) []float32 {
		return func(w *weights, l int) []float32 { return f(&w.blocks[l]) }
	}
	for _, t := range []llmcTensor{
		{name: "ln1w", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.ln1W })},
		{name: "ln1b", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.ln1B })},
		{name: "qkvw", perLyr: true, rows: 3 * c, cols: c, transp: true, field: blk(func(b *blockWeights) []float32 { return b.wqkv })},
		{name: "qkvb", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.bqkv })},
		{name: "attprojw", perLyr: true, rows: c, cols: c, transp: true, field: blk(func(b *blockWeights) []float32 { return b.wproj })},
		{name: "attprojb", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.bproj })},
		{name: "ln2w", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.ln2W })},
		{name: "ln2b", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.ln2B })},
		{name: "fcw", perLyr: true, rows: 4 * c, cols: c, transp: true, field: blk(func(b *blockWeights) []float32 { return b.wfc })},
		{name: "fcb", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.bfc })},
		{name: "fcprojw", perLyr: true, rows: c, cols: 4 * c, transp: true, field: blk(func(b *blockWeights) []float32 { return b.wout })},
		{name: "fcprojb", perLyr: true, field: blk(func(b *blockWeights) []float32 { return b.bout })},
		{name: "lnfw", field: func(w *weights, _ int) []float32 { return w.lnfW }},
		{name: "lnfb", field: func(w *weights, _ int) []float32 { return w.lnfB }},
	} {
		n := 1
		if t.perLyr {
			n = int(L)
		}
		for l := 0; l < n; l++ {
			dst := t.field(p, l)
			name := t.name
			if t.perLyr {
				name = fmt.Sprintf("%s of layer %d", t.name, l)
			}
			if t.transp {
				err = tr.readTransposed(name, dst, t.rows, t.cols)
			} else {
				err = tr.read(name, dst)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
