package gpt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Hugging Face GPT-2 safetensors: tensors named wte.weight, wpe.weight,
// h.N.{ln_1,attn.c_attn,attn.c_proj,ln_2,mlp.c_fc,mlp.c_proj}.{weight,bias}
// and ln_f.{weight,bias}, each possibly prefixed "transformer.". Their
// Conv1D weights are stored in×out, which is this package's layout, so
// nothing is transposed.

// maxHFHeader bounds a safetensors JSON header (as the reference
// implementation does).
const maxHFHeader = 100 << 20

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

// hfEntry is one tensor of a safetensors header.
type hfEntry struct {
	name       string // as in the file
	dt         dtype
	shape      []int
	start, end int64 // within the data section
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

// parseHFHeader reads and checks the header of a safetensors file of size
// bytes: every tensor's dtype, shape and offsets, the offsets inside the
// data section and no two tensors' bytes overlapping. It returns the
// entries, the metadata and where the data section starts.
func parseHFHeader(r io.ReaderAt, size int64) ([]hfEntry, map[string]string, int64, error) {
	var pre [8]byte
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, nil, 0, fmt.Errorf("reading the header length: %v", err)
	}
	hl := binary.LittleEndian.Uint64(pre[:])
	if hl > maxHFHeader || hl > uint64(size-8) {
		return nil, nil, 0, fmt.Errorf("safetensors header of %d bytes in a file of %d (at most %d)", hl, size, min(maxHFHeader, size-8))
	}
	hdr := make([]byte, hl)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, nil, 0, fmt.Errorf("reading the header: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, nil, 0, fmt.Errorf("safetensors header is not a JSON object: %v", err)
	}
	dataStart := 8 + int64(hl)
	dataLen := size - dataStart
	var meta map[string]string
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, nil, 0, fmt.Errorf("safetensors __metadata__ is not an object of strings: %v", err)
		}
	}
	var es []hfEntry
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			Dtype       string  `json:"dtype"`
			Shape       []int   `json:"shape"`
			DataOffsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, 0, fmt.Errorf("tensor %q: bad header entry: %v", name, err)
		}
		if len(e.DataOffsets) != 2 {
			return nil, nil, 0, fmt.Errorf("tensor %q: data_offsets %v, want [start, end]", name, e.DataOffsets)
		}
		ent := hfEntry{name: name, shape: e.Shape, start: e.DataOffsets[0], end: e.DataOffsets[1]}
		if ent.start < 0 || ent.end < ent.start || ent.end > dataLen {
			return nil, nil, 0, fmt.Errorf("tensor %q: data_offsets [%d, %d] outside the %d bytes of data", name, ent.start, ent.end, dataLen)
		}
		switch e.Dtype {
		case "F32":
			ent.dt = dtypeF32
		case "F16":
			ent.dt = dtypeF16
		case "BF16":
			ent.dt = dtypeBF16
		default:
			// Checked only for the tensors loaded (the mask buffers may be
			// of any type).
			ent.dt = dtype{name: e.Dtype}
		}
		if ent.dt.size > 0 {
			n := int64(1)
			for _, d := range e.Shape {
				if d < 0 || (d > 0 && n > dataLen/int64(d)) {
					return nil, nil, 0, fmt.Errorf("tensor %q: shape %v does not fit in %d bytes of data", name, e.Shape, dataLen)
				}
				n *= int64(d)
			}
			if n*int64(ent.dt.size) != ent.end-ent.start {
				return nil, nil, 0, fmt.Errorf("tensor %q: %s of shape %v needs %d bytes, data_offsets give %d", name, e.Dtype, e.Shape, n*int64(ent.dt.size), ent.end-ent.start)
			}
		}
		es = append(es, ent)
	}
	// No two tensors share bytes: the tensors loaded then total at most
	// the file's data, which bounds the model allocated from them.
	slices.SortFunc(es, func(a, b hfEntry) int {
		if a.start != b.start {
			return compareInt64(a.start, b.start)
		}
		return compareInt64(a.end, b.end)
	})
	for i := 1; i < len(es); i++ {
		if es[i].start < es[i-1].end {
			return nil, nil, 0, fmt.Errorf("tensors %q and %q overlap (data_offsets [%d, %d] and [%d, %d])", es[i-1].name, es[i].name, es[i-1].start, es[i-1].end, es[i].start, es[i].end)
		}
	}
	return es, meta, dataStart, nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// loadHF loads a Hugging Face GPT-2 model.safetensors of size bytes.
func loadHF(r io.ReaderAt, size int64, configJSON []byte, opts ...Option) (*Model, error) {
	es, meta, dataStart, err := parseHFHeader(r, size)
	if err != nil {
		return nil, err
	}
	if meta["format"] == formatName {
		return nil, errors.New("a TinyGPT checkpoint, not a GPT-2 one: read it with gpt.Load")
	}
	byName := map[string]*hfEntry{}
	var lmHead *hfEntry
	layers := 0
	for i := range es {
		e := &es[i]
		if strings.TrimPrefix(e.name, "transformer.") == hfLMHead {
			if lmHead != nil {
				return nil, fmt.Errorf("tensors %q and %q are the same", lmHead.name, e.name)
			}
			lmHead = e
			continue
		}
		ours, block, ignore, ok := hfName(e.name)
		if !ok {
			return nil, fmt.Errorf("tensor %q is not part of GPT-2's layout", e.name)
		}
		if ignore {
			continue
		}
		if prev, dup := byName[ours]; dup {
			return nil, fmt.Errorf("tensors %q and %q are the same", prev.name, e.name)
		}
		if e.dt.size == 0 {
			return nil, fmt.Errorf("tensor %q has dtype %s; F32, F16 and BF16 are read", e.name, e.dt.name)
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
	case len(wte.shape) != 2 || len(wpe.shape) != 2 || wte.shape[1] != wpe.shape[1]:
		return nil, fmt.Errorf("wte.weight of shape %v and wpe.weight of shape %v: want [vocab, width] and [positions, width]", wte.shape, wpe.shape)
	case layers == 0:
		return nil, errors.New("no blocks (tensors h.0.*)")
	case (layers-1)*len(hfBlockNames) > len(byName):
		// Before Config.Tensors lists them all.
		return nil, fmt.Errorf("tensors of block h.%d, but only %d tensors in all: blocks are missing", layers-1, len(byName))
	case lmHead != nil && lmHead.dt.size == 0:
		return nil, fmt.Errorf("tensor %q has dtype %s; F32, F16 and BF16 are read", lmHead.name, lmHead.dt.name)
	}
	cfg := Config{Vocab: wte.shape[0], BlockSize: wpe.shape[0], Layers: layers, Width: wte.shape[1], TieEmbeddings: true}
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
		if !slices.Equal(e.shape, t.Shape) {
			return nil, fmt.Errorf("tensor %q has shape %v, the model (%s) needs %v", e.name, e.shape, cfg.describe(), t.Shape)
		}
	}
	if lmHead != nil && !slices.Equal(lmHead.shape, wte.shape) {
		return nil, fmt.Errorf("tensor %q has shape %v, wte.weight %v: GPT-2's head is tied to wte", lmHead.name, lmHead.shape, wte.shape)
	}
	// Every size is checked: allocate and read.
	m, err := newModel(cfg, opts...)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		e := byName[t.Name]
		tr := newTensorReader(bufferedSection(r, dataStart+e.start, e.end-e.start), e.dt, 0)
		if err := tr.read(e.name, m.Params[t.Offset:t.Offset+t.Size()]); err != nil {
			return nil, err
		}
	}
	if lmHead != nil {
		if err := checkTied(r, dataStart, lmHead, m.p.wte, cfg.Width); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// checkTied reads the lm_head tensor e in chunks and refuses it unless it
// equals wte, as GPT-2's tied head does.
func checkTied(r io.ReaderAt, dataStart int64, e *hfEntry, wte []float32, width int) error {
	tr := newTensorReader(bufferedSection(r, dataStart+e.start, e.end-e.start), e.dt, 0)
	chunk := make([]float32, 1<<12)
	for done := 0; done < len(wte); {
		c := chunk[:min(len(chunk), len(wte)-done)]
		if err := tr.read(e.name, c); err != nil {
			return err
		}
		for i, v := range c {
			if v != wte[done+i] {
				k := done + i
				return fmt.Errorf("tensor %q differs from wte.weight at [%d, %d] (%g, %g): an untied head, which GPT-2 does not have", e.name, k/width, k%width, v, wte[k])
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
