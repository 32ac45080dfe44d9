package gpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simdgpt/simdgpt/gpt/safetensors"
	"github.com/simdgpt/simdgpt/kernels"
)

// Hugging Face GPT-2 safetensors: tensors named wte.weight, wpe.weight,
// h.N.{ln_1,attn.c_attn,attn.c_proj,ln_2,mlp.c_fc,mlp.c_proj}.{weight,bias}
// and ln_f.{weight,bias}, each possibly prefixed "transformer.". Their
// Conv1D weights are stored in×out, which is this package's layout, so
// nothing is transposed.

// hfBlockNames maps the name of a block's tensor in GPT-2's safetensors
// (after "h.N.") to its name in Config.Tensors (after "h.N.").
var hfBlockNames = map[string]string{
	"ln_1.weight":        "ln1.w",
	"ln_1.bias":          "ln1.b",
	"attn.c_attn.weight": "attn.w_qkv",
	"attn.c_attn.bias":   "attn.b_qkv",
	"attn.c_proj.weight": "attn.w_proj",
	"attn.c_proj.bias":   "attn.b_proj",
	"ln_2.weight":        "ln2.w",
	"ln_2.bias":          "ln2.b",
	"mlp.c_fc.weight":    "mlp.w_fc",
	"mlp.c_fc.bias":      "mlp.b_fc",
	"mlp.c_proj.weight":  "mlp.w_out",
	"mlp.c_proj.bias":    "mlp.b_out",
}

// hfTopNames maps the names outside the blocks.
var hfTopNames = map[string]string{
	"wte.weight":  "wte",
	"wpe.weight":  "wpe",
	"ln_f.weight": "ln_f.w",
	"ln_f.bias":   "ln_f.b",
}

// hfLMHead is the untied head's name; GPT-2 ties it to wte, so when a file
// has it, it must equal wte.weight.
const hfLMHead = "lm_head.weight"

// hfTensor is one tensor of a safetensors header and its element type.
type hfTensor struct {
	safetensors.Entry
	dt dtype
}

// hfConfig is what LoadGPT2 reads of a Hugging Face config.json.
type hfConfig struct {
	ModelType  *string  `json:"model_type"`
	NHead      *int     `json:"n_head"`
	NEmbd      *int     `json:"n_embd"`
	NLayer     *int     `json:"n_layer"`
	NPositions *int     `json:"n_positions"`
	VocabSize  *int     `json:"vocab_size"`
	LNEps      *float64 `json:"layer_norm_epsilon"`
	Activation *string  `json:"activation_function"`
}

// hfName maps a safetensors tensor name to its name in Config.Tensors and
// its block (-1 outside the blocks); ignore is true for GPT-2's attention
// mask buffers (attn.bias, attn.masked_bias), which are not parameters.
func hfName(name string) (ours string, block int, ignore bool, ok bool) {
	name = strings.TrimPrefix(name, "transformer.")
	if o, ok := hfTopNames[name]; ok {
		return o, -1, false, true
	}
	rest, found := strings.CutPrefix(name, "h.")
	if !found {
		return "", 0, false, false
	}
	num, sub, found := strings.Cut(rest, ".")
	l, err := strconv.Atoi(num)
	if !found || err != nil || l < 0 || strconv.Itoa(l) != num {
		return "", 0, false, false
	}
	if sub == "attn.bias" || sub == "attn.masked_bias" {
		return "", l, true, true
	}
	o, ok := hfBlockNames[sub]
	if !ok {
		return "", 0, false, false
	}
	return "h." + num + "." + o, l, false, true
}

// hfTensors returns the tensors of the checked safetensors header h
// (safetensors.ReadHeader), each with its dtype's decoder: a zero dtype
// (size 0, name the file's) for one LoadGPT2 does not read, which is an
// error only for a tensor it loads (the mask buffers may be of any type).
func hfTensors(h *safetensors.Header) []hfTensor {
	ts := make([]hfTensor, len(h.Tensors))
	for i, e := range h.Tensors {
		ts[i].Entry = e
		switch e.DType {
		case "F32":
			ts[i].dt = dtypeF32
		case "F16":
			ts[i].dt = dtypeF16
		case "BF16":
			ts[i].dt = dtypeBF16
		default:
			ts[i].dt = dtype{name: e.DType}
		}
	}
	return ts
}

// loadHF loads a Hugging Face GPT-2 model.safetensors of size bytes.
func loadHF(r io.ReaderAt, size int64, configJSON []byte, opts ...Option) (*Model, error) {
	h, err := safetensors.ReadHeader(r, size)
	if err != nil {
		return nil, err
	}
	es, dataStart := hfTensors(h), h.DataStart
	if h.Metadata["format"] == formatName {
		return nil, errors.New("a TinyGPT checkpoint, not a GPT-2 one: read it with gpt.Load")
	}
	byName := map[string]*hfTensor{}
	var lmHead *hfTensor
	layers := 0
	for i := range es {
		e := &es[i]
		if strings.TrimPrefix(e.Name, "transformer.") == hfLMHead {
			if lmHead != nil {
				return nil, fmt.Errorf("tensors %q and %q are the same", lmHead.Name, e.Name)
			}
			lmHead = e
			continue
		}
		ours, block, ignore, ok := hfName(e.Name)
		if !ok {
			return nil, fmt.Errorf("tensor %q is not part of GPT-2's layout", e.Name)
		}
		if ignore {
			continue
		}
		if prev, dup := byName[ours]; dup {
			return nil, fmt.Errorf("tensors %q and %q are the same", prev.Name, e.Name)
		}
		if e.dt.size == 0 {
			return nil, fmt.Errorf("tensor %q has dtype %s; F32, F16 and BF16 are read", e.Name, e.DType)
		}
		byName[ours] = e
		layers = max(layers, block+1)
	}
	wte, wpe := byName["wte"], byName["wpe"]
	switch {
	case wte == nil:
		return nil, errors.New("no tensor wte.weight: not a GPT-2 checkpoint")
	case wpe == nil:
		return nil, errors.New("no tensor wpe.weight: not a GPT-2 checkpoint")
	case len(wte.Shape) != 2 || len(wpe.Shape) != 2 || wte.Shape[1] != wpe.Shape[1]:
		return nil, fmt.Errorf("wte.weight of shape %v and wpe.weight of shape %v: want [vocab, width] and [positions, width]", wte.Shape, wpe.Shape)
	case layers == 0:
		return nil, errors.New("no blocks (tensors h.0.*)")
	case (layers-1)*len(hfBlockNames) > len(byName):
		// Before Config.Tensors lists them all.
		return nil, fmt.Errorf("tensors of block h.%d, but only %d tensors in all: blocks are missing", layers-1, len(byName))
	case lmHead != nil && lmHead.dt.size == 0:
		return nil, fmt.Errorf("tensor %q has dtype %s; F32, F16 and BF16 are read", lmHead.Name, lmHead.DType)
	}
	cfg := Config{Vocab: wte.Shape[0], BlockSize: wpe.Shape[0], Layers: layers, Width: wte.Shape[1], TieEmbeddings: true}
	if cfg.Heads, err = hfHeads(configJSON, cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ts := cfg.Tensors()
	for _, t := range ts {
		e := byName[t.Name]
		if e == nil {
			return nil, fmt.Errorf("tensor %s (our %s) is missing", hfFileName(t.Name), t.Name)
		}
		if !slices.Equal(e.Shape, t.Shape) {
			return nil, fmt.Errorf("tensor %q has shape %v, the model (%s) needs %v", e.Name, e.Shape, cfg.describe(), t.Shape)
		}
	}
	if lmHead != nil && !slices.Equal(lmHead.Shape, wte.Shape) {
		return nil, fmt.Errorf("tensor %q has shape %v, wte.weight %v: GPT-2's head is tied to wte", lmHead.Name, lmHead.Shape, wte.Shape)
	}
	// Every size is checked: allocate and read.
	read := func(name string, dst []float32) error {
		e := byName[name]
		if e.dt.name == dtypeF32.name {
			return readF32At(r, dataStart+e.Start, e.Name, dst)
		}
		return newTensorReader(bufferedSection(r, dataStart+e.Start, e.End-e.Start), e.dt, 0).read(e.Name, dst)
	}
	var m *Model
	if o := newOptions(opts); o.load != WeightsF32 {
		m, err = loadHFLow(cfg, o, read)
	} else if m, err = newModel(cfg, opts...); err == nil {
		for _, t := range ts {
			if err = read(t.Name, m.Params[t.Offset:t.Offset+t.Size()]); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if lmHead != nil {
		if err := checkTied(r, dataStart, lmHead, m.p.wte, cfg.Width); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// loadHFLow reads the model of config cfg (tied embeddings) into a model
// for inference in format o.load, tensor by tensor with read(name, dst)
// (names Config.Tensors'): the float32 tensors into the model's own, each
// matrix into one float32 buffer reused for the next, converted from it
// as Model.WithWeights converts (bf16 values are kept exactly, as
// ToBF16 rounds none of them). Memory is the low-bit model and that
// buffer, of the largest matrix (w_fc's 4·C·C).
func loadHFLow(cfg Config, o options, read func(name string, dst []float32) error) (*Model, error) {
	if err := cfg.CheckLimits(); err != nil {
		return nil, err
	}
	stageBytes := 4 * 4 * int64(cfg.Width) * int64(cfg.Width)
	if err := CheckMemory("the "+o.load.String()+" model", InferenceBytes(cfg, o.load)+stageBytes); err != nil {
		return nil, err
	}
	var stage []float32
	return newInference(cfg, o.load, o.impl, read, func(name string, k, n int) (linear, error) {
		stage = grow(stage, k*n)
		if err := read(name, stage); err != nil {
			return linear{}, err
		}
		return linear{k: k, n: n, f32: stage}.convert(o.load)
	}, nil)
}

// checkTied reads the lm_head tensor e in chunks and refuses it unless it
// equals wte, as GPT-2's tied head does.
func checkTied(r io.ReaderAt, dataStart int64, e *hfTensor, wte []float32, width int) error {
	tr := newTensorReader(bufferedSection(r, dataStart+e.Start, e.End-e.Start), e.dt, 0)
	chunk := make([]float32, 1<<12)
	for done := 0; done < len(wte); {
		c := chunk[:min(len(chunk), len(wte)-done)]
		if err := tr.read(e.Name, c); err != nil {
			return err
		}
		for i, v := range c {
			if v != wte[done+i] {
				k := done + i
				return fmt.Errorf("tensor %q differs from wte.weight at [%d, %d] (%g, %g): an untied head, which GPT-2 does not have", e.Name, k/width, k%width, v, wte[k])
			}
		}
		done += len(c)
	}
	return nil
}

// hfHeads returns the number of heads of cfg: config.json's n_head, or
// GPT-2's for the width. It also checks the rest of config.json against
// the weights' shapes and against what this package computes.
func hfHeads(configJSON []byte, cfg Config) (int, error) {
	heads := gpt2Heads(cfg.Width)
	if configJSON == nil {
		if heads == 0 {
			return 0, fmt.Errorf("width %d is not one of GPT-2's (768, 1024, 1280, 1600) and there is no %s with n_head beside the file", cfg.Width, HFConfigFile)
		}
		return heads, nil
	}
	var hc hfConfig
	if err := json.Unmarshal(configJSON, &hc); err != nil {
		return 0, fmt.Errorf("%s: %v", HFConfigFile, err)
	}
	for _, c := range []struct {
		key       string
		got       *int
		fromShape int
	}{
		{"n_embd", hc.NEmbd, cfg.Width},
		{"n_layer", hc.NLayer, cfg.Layers},
		{"n_positions", hc.NPositions, cfg.BlockSize},
		{"vocab_size", hc.VocabSize, cfg.Vocab},
	} {
		if c.got != nil && *c.got != c.fromShape {
			return 0, fmt.Errorf("%s says %s %d, the weights have %d", HFConfigFile, c.key, *c.got, c.fromShape)
		}
	}
	switch {
	case hc.ModelType != nil && *hc.ModelType != "gpt2":
		return 0, fmt.Errorf("%s says model_type %q, not gpt2", HFConfigFile, *hc.ModelType)
	case hc.LNEps != nil && math.Abs(*hc.LNEps-lnEps) > 1e-12:
		return 0, fmt.Errorf("%s says layer_norm_epsilon %g; this package's LayerNorm uses GPT-2's %g", HFConfigFile, *hc.LNEps, lnEps)
	case hc.Activation != nil && *hc.Activation != "gelu_new" && *hc.Activation != "gelu_pytorch_tanh":
		return 0, fmt.Errorf("%s says activation_function %q; this package computes GPT-2's tanh GELU (gelu_new)", HFConfigFile, *hc.Activation)
	}
	if hc.NHead != nil {
		if *hc.NHead < 1 || cfg.Width%*hc.NHead != 0 {
			return 0, fmt.Errorf("%s says n_head %d, which does not divide the width %d", HFConfigFile, *hc.NHead, cfg.Width)
		}
		return *hc.NHead, nil
	}
	if heads == 0 {
		return 0, fmt.Errorf("width %d is not one of GPT-2's (768, 1024, 1280, 1600) and %s has no n_head", cfg.Width, HFConfigFile)
	}
	return heads, nil
}

// hfFileName is the safetensors name of our tensor name (without the
// optional "transformer." prefix).
func hfFileName(ours string) string {
	for k, v := range hfTopNames {
		if v == ours {
			return k
		}
	}
	if rest, ok := strings.CutPrefix(ours, "h."); ok {
		if num, sub, ok := strings.Cut(rest, "."); ok {
			for k, v := range hfBlockNames {
				if v == sub {
					return "h." + num + "." + k
				}
			}
		}
	}
	return ours
}

// describe is a short description of c for error messages.
func (c Config) describe() string {
	return fmt.Sprintf("%d layers, %d heads, width %d, vocabulary %d, block %d", c.Layers, c.heads(), c.Width, c.Vocab, c.BlockSize)
}

// readF32At fills dst with the len(dst) little-endian float32 values at
// offset off of r, read straight into dst (one copy, from the file to the
// model, on a little-endian machine), refusing values that are not
// finite as tensorReader.read does. It reads safetensors.ChunkSize bytes
// at a time and checks each piece just read, while it is still in the
// CPU's cache (one pass over the model's memory, not two).
func readF32At(r io.ReaderAt, off int64, name string, dst []float32) error {
	if !littleEndian {
		return newTensorReader(bufferedSection(r, off, 4*int64(len(dst))), dtypeF32, 0).read(name, dst)
	}
	const piece = safetensors.ChunkSize / 4
	for lo := 0; lo < len(dst); lo += piece {
		d := dst[lo:min(lo+piece, len(dst))]
		if _, err := r.ReadAt(f32Bytes(d), off+4*int64(lo)); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		if i := firstNonFinite(d); i >= 0 {
			return fmt.Errorf("tensor %s: element %d is %v", name, lo+i, d[i])
		}
	}
	return nil
}

// firstNonFinite returns the index of the first element of v that is an
// infinity or a NaN, or -1. A finite sum (the default implementation's
// Sum, SIMD: a loader has no model implementation yet) means every
// element is finite, an infinity or a NaN making the sum one; only a sum
// that is not, which finite elements can also make by overflowing, has
// the elements looked at one by one.
func firstNonFinite(v []float32) int {
	if s := float64(kernels.Default().Sum(v)); !math.IsInf(s, 0) && !math.IsNaN(s) {
		return -1
	}
	const exp = 0x7f800000
	// (bits&exp) + 2^23 reaches bit 31 exactly when the exponent is all
	// ones: whole chunks are checked with no branch per element.
	const chunk = 1 << 12
	for lo := 0; lo < len(v); lo += chunk {
		c := v[lo:min(lo+chunk, len(v))]
		var acc uint32
		for _, x := range c {
			acc |= math.Float32bits(x)&exp + 1<<23
		}
		if acc&(1<<31) == 0 {
			continue
		}
		for i, x := range c {
			if math.Float32bits(x)&exp == exp {
				return lo + i
			}
		}
	}
	return -1
}
