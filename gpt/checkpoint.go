package gpt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
	"github.com/simdgpt/simdgpt/internal/atomicfile"
	"github.com/simdgpt/simdgpt/internal/readfile"
)

// CheckpointFile is the file name of a checkpoint in its directory.
const CheckpointFile = "checkpoint.safetensors"

// Metadata keys of a checkpoint (all values are strings, as safetensors
// requires).
const (
	MetaFormat = "format"    // "tinygpt/1"
	MetaConfig = "config"    // Config as JSON
	MetaVocab  = "vocab"     // the character vocabulary in id order (absent for token files)
	MetaStep   = "step"      // optimizer steps taken
	MetaTrain  = "train"     // TrainConfig as JSON
	MetaRNG    = "rng_state" // batch generator state, decimal
	formatName = "tinygpt/1"
	optMPrefix = "optimizer.m" // AdamW first moments, [NumParams]
	optVPrefix = "optimizer.v" // AdamW second moments, [NumParams]
)

// Checkpoint is what a checkpoint file holds.
type Checkpoint struct {
	Model *Model
	Vocab *data.Vocab // nil for a model trained on token ids
	Step  int
	// Train, Opt and RNGState are set when the file has the training state
	// (every file Save writes has).
	Train    TrainConfig
	Opt      *AdamW
	RNGState uint64
	// Extra holds the metadata SaveWith was given (settings of the program
	// that trained the model).
	Extra map[string]string
	// Warning is set when the file loaded but is not fully verified: a
	// checkpoint written before whole-file checksums, whose header (config,
	// step, vocabulary, generator state) no checksum covers. The next save
	// adds the checksum.
	Warning string
}

// reserved are the metadata keys Save writes itself.
var reserved = map[string]bool{MetaFormat: true, MetaConfig: true, MetaVocab: true, MetaStep: true, MetaTrain: true,
	MetaRNG: true, MetaWeights: true, safetensors.ChecksumKey: true, safetensors.DataChecksumKey: true}

// configJSON is Config with stable lower-case keys.
type configJSON struct {
	Vocab     int `json:"vocab"`
	BlockSize int `json:"block_size"`
	Layers    int `json:"layers"`
	Heads     int `json:"heads"`
	Width     int `json:"width"`
	// TieEmbeddings is omitted when false, so untied checkpoints keep
	// their bytes.
	TieEmbeddings bool `json:"tie_embeddings,omitempty"`
}

func (c Config) jsonString() string {
	b, _ := json.Marshal(configJSON{c.Vocab, c.BlockSize, c.Layers, c.heads(), c.Width, c.TieEmbeddings})
	return string(b)
}

// Save writes the trainer's model, optimizer and generator state with the
// vocabulary (nil for token ids) to path atomically: a temporary file in the
// same directory, fsynced, renamed over path, and the directory fsynced.
// The file is a safetensors file whose CRC-32C covers every byte (see
// package safetensors).
func (t *Trainer) Save(path string, vocab *data.Vocab) error {
	return t.SaveWith(path, vocab, nil)
}

// SaveWith is Save with extra metadata (string keys and values, for
// example a program's own settings), which Load returns in
// Checkpoint.Extra. A key Save writes itself is an error.
func (t *Trainer) SaveWith(path string, vocab *data.Vocab, extra map[string]string) error {
	m := t.Model
	var ts []safetensors.Tensor
	for _, x := range m.Config.Tensors() {
		ts = append(ts, safetensors.Tensor{Name: x.Name, Shape: x.Shape, Data: m.Params[x.Offset : x.Offset+x.Size()]})
	}
	n := len(m.Params)
	ts = append(ts,
		safetensors.Tensor{Name: optMPrefix, Shape: []int{n}, Data: t.Opt.M},
		safetensors.Tensor{Name: optVPrefix, Shape: []int{n}, Data: t.Opt.V})
	train, _ := json.Marshal(t.Cfg)
	meta := map[string]string{
		MetaFormat: formatName,
		MetaConfig: m.Config.jsonString(),
		MetaStep:   strconv.Itoa(t.Opt.Step),
		MetaTrain:  string(train),
		MetaRNG:    strconv.FormatUint(t.RNG.State(), 10),
	}
	if vocab != nil {
		meta[MetaVocab] = vocab.String()
	}
	for k, v := range extra {
		if reserved[k] {
			return fmt.Errorf("gpt: SaveWith: extra metadata key %q is reserved", k)
		}
		meta[k] = v
	}
	b, err := safetensors.Encode(ts, meta)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes b to path so that path holds either its old
// contents or all of b, whatever happens: a temporary file in the same
// directory is written and fsynced, renamed over path, and the directory
// fsynced so the rename itself is durable. A link to a regular file
// replaces that file; a path that exists and is not a regular file (a
// directory, a FIFO, a device) is an error, and left as it is.
func WriteFileAtomic(path string, b []byte) error {
	return atomicfile.Write(path, b)
}

// Load reads a checkpoint: one Save wrote (a float32 model with its
// optimizer state) or one SaveWeights wrote (a model for inference, its
// matrices in float32 or in the low-bit format MetaWeights names, which
// the model returned keeps: Model.Weights). A missing, truncated or
// corrupted file (any byte: the checksum covers the whole file), one that
// is not a regular file or too large for the memory available, one whose
// config is outside the limits (see CheckLimits) or whose tensors do not
// match its config, is an error naming the file, and nothing is
// returned; sizes are checked before the model is allocated. A
// checkpoint of an older version without the whole-file checksum loads
// with Checkpoint.Warning set.
//
// The file is read once, in file order, each tensor straight into the
// model's memory (which the system is asked to back with huge pages) in
// pieces whose checksum is computed while they are still in the CPU's
// cache (safetensors.Reader): no copy of the file is made or mapped, and
// the model keeps no reference to it, so a file replaced or truncated
// afterwards changes nothing, and one truncated or changed while it loads
// is an error (the checksum, or a read that ends early).
func Load(path string) (*Checkpoint, error) { return load(path, true) }

// LoadForInference is Load for a caller that will not resume training: a
// checkpoint's optimizer state (the AdamW moments Save writes, twice the
// model's size) is verified with every other byte of the file but not
// kept, so neither its memory nor the time to fill it is spent, and
// Checkpoint.Opt is nil. Everything else is as Load returns it, errors
// included.
func LoadForInference(path string) (*Checkpoint, error) { return load(path, false) }

// load is Load, keeping the optimizer state when keepOpt is set.
func load(path string, keepOpt bool) (*Checkpoint, error) {
	// The size limit is the memory check below.
	f, size, err := readfile.Open(path, math.MaxInt64)
	if errors.Is(err, readfile.ErrNotRegular) {
		return nil, fmt.Errorf("checkpoint %w", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := CheckMemory(fmt.Sprintf("checkpoint %s: loading its %s", path, FormatBytes(size)), loadBytes(f, size, keepOpt)); err != nil {
		return nil, err
	}
	ck, err := decodeFrom(f, size, keepOpt)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return ck, nil
}

// loadBytes estimates the memory Load takes for the checkpoint r of size
// bytes: the reader's piece of the file (safetensors.ChunkSize, or the
// whole file when it is smaller), the parsed header (its JSON is parsed
// twice, into maps and strings: counted as 16 times its length), and the
// model: a float32 one's parameters and gradients, with the optimizer's
// moments and decay mask when the file has them, or a low-bit one
// (InferenceBytes); the moments only when keepOpt is set. The model's
// part comes from the config in the header when the tensors' bytes can
// hold that model. A header that does not parse, or disagrees with its
// tensors (refused before the model is allocated), counts the bytes and
// the parse.
func loadBytes(r io.ReaderAt, size int64, keepOpt bool) int64 {
	file := min(size, safetensors.ChunkSize)
	h, err := safetensors.ReadHeader(r, size)
	if err != nil {
		return file + 16*min(size, maxHeaderBytes)
	}
	need := file + 16*h.DataStart
	var cj configJSON
	if json.Unmarshal([]byte(h.Metadata[MetaConfig]), &cj) != nil {
		return need
	}
	cfg := Config{Vocab: cj.Vocab, BlockSize: cj.BlockSize, Layers: cj.Layers, Heads: cj.Heads, Width: cj.Width, TieEmbeddings: cj.TieEmbeddings}
	if cfg.CheckLimits() != nil {
		return need
	}
	if v, ok := h.Metadata[MetaWeights]; ok {
		if f, err := ParseWeights(v); err == nil && f != WeightsF32 {
			return need + InferenceBytes(cfg, f)
		}
		return need
	}
	p := int64(cfg.NumParams())
	if 4*p > h.DataLen {
		return need
	}
	need += ModelBytes(cfg, false)
	for _, e := range h.Tensors {
		if e.Name == optMPrefix && keepOpt {
			need += 2*4*p + p
			break
		}
	}
	return need
}

// maxHeaderBytes bounds a safetensors header (as package safetensors
// does).
const maxHeaderBytes = 100 << 20

// decodeCheckpoint returns the checkpoint of the file b (all its bytes).
func decodeCheckpoint(b []byte) (*Checkpoint, error) {
	return decodeFrom(bytes.NewReader(b), int64(len(b)), true)
}

// decodeFrom returns the checkpoint of the file r of size bytes, read in
// one pass (safetensors.Reader): the header is checked and the model
// allocated, then the tensors are read into it while the whole-file
// checksum is verified, whose error, when it has one, is the one returned
// (a damaged file is reported as such, whatever else is wrong with it);
// no model is returned before every byte has been verified. The
// optimizer state is kept when keepOpt is set, else only verified.
func decodeFrom(r io.ReaderAt, size int64, keepOpt bool) (*Checkpoint, error) {
	rd, err := safetensors.NewReader(r, size)
	if err != nil {
		return nil, err
	}
	sinks := map[string]safetensors.Sink{}
	var checks []func() error
	ck, err := decodeHeader(rd.H, keepOpt, sinks, &checks)
	if err != nil {
		if cerr := rd.Finish(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	if err := rd.ReadData(sinks); err != nil {
		return nil, err
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return nil, err
		}
	}
	return ck, nil
}

// decodeHeader returns the checkpoint of the file whose header is h,
// checked against its config, with its model allocated: it adds to sinks
// what reads each tensor into the model (and the optimizer's moments),
// and to checks what checks the weights once they are read. The
// optimizer's moments are read (and their memory asked for) only when
// keepOpt is set; their metadata is checked either way.
func decodeHeader(h *safetensors.Header, keepOpt bool, sinks map[string]safetensors.Sink, checks *[]func() error) (*Checkpoint, error) {
	var err error
	meta := h.Metadata
	if meta[MetaFormat] != formatName {
		return nil, fmt.Errorf("not a TinyGPT checkpoint (metadata format %q, want %q)", meta[MetaFormat], formatName)
	}
	var cj configJSON
	if err := json.Unmarshal([]byte(meta[MetaConfig]), &cj); err != nil {
		return nil, fmt.Errorf("bad config metadata %q: %v", meta[MetaConfig], err)
	}
	cfg := Config{Vocab: cj.Vocab, BlockSize: cj.BlockSize, Layers: cj.Layers, Heads: cj.Heads, Width: cj.Width, TieEmbeddings: cj.TieEmbeddings}
	if err := cfg.CheckLimits(); err != nil {
		return nil, err
	}
	wf := WeightsF32
	if v, ok := meta[MetaWeights]; ok {
		if wf, err = ParseWeights(v); err != nil || wf == WeightsF32 {
			return nil, fmt.Errorf("bad %s metadata %q: want bf16 or int8 (none for float32)", MetaWeights, v)
		}
	}
	step, err := strconv.Atoi(meta[MetaStep])
	if err != nil || step < 0 {
		return nil, fmt.Errorf("bad step metadata %q", meta[MetaStep])
	}
	ck := &Checkpoint{Step: step}
	if v, ok := meta[MetaVocab]; ok {
		if ck.Vocab, err = data.ParseVocab(v); err != nil {
			return nil, err
		}
		if ck.Vocab.Size() != cfg.Vocab {
			return nil, fmt.Errorf("vocabulary of %d characters for a model of %d tokens", ck.Vocab.Size(), cfg.Vocab)
		}
	}
	if !safetensors.HeaderVerified(meta) {
		ck.Warning = "written by an older version: no checksum covers its header (config, step, vocabulary, generator state), only its tensors; the next save adds one"
	}
	for k, v := range meta {
		if !reserved[k] {
			if ck.Extra == nil {
				ck.Extra = map[string]string{}
			}
			ck.Extra[k] = v
		}
	}
	byName := map[string]safetensors.Entry{}
	for _, e := range h.Tensors {
		byName[e.Name] = e
	}
	// Every tensor's dtype and shape against the config before the model
	// is allocated: the file backs tensors of that size, so a model of
	// the same size is plausible; a config that disagrees with them is
	// not trusted.
	for _, x := range cfg.Tensors() {
		if wf != WeightsF32 && isLowMatrix(x.Name) {
			continue
		}
		e, ok := byName[x.Name]
		switch {
		case !ok:
			return nil, fmt.Errorf("tensor %q is missing", x.Name)
		case e.DType != "F32":
			return nil, fmt.Errorf("tensor %q has dtype %s, not F32", x.Name, e.DType)
		case fmt.Sprint(e.Shape) != fmt.Sprint(x.Shape):
			return nil, fmt.Errorf("tensor %q has shape %v, the config needs %v", x.Name, e.Shape, x.Shape)
		}
	}
	if wf != WeightsF32 {
		if err := checkLowTensors(cfg, wf, byName); err != nil {
			return nil, err
		}
	}
	mt, okM := byName[optMPrefix]
	vt, okV := byName[optVPrefix]
	if okM != okV {
		return nil, errors.New("optimizer state has only one of its two moments")
	}
	n := cfg.NumParams()
	if okM && wf != WeightsF32 {
		return nil, fmt.Errorf("optimizer state with %v weights, which do not train", wf)
	}
	if okM && (mt.DType != "F32" || vt.DType != "F32" || mt.End-mt.Start != 4*int64(n) || vt.End-vt.Start != 4*int64(n)) {
		return nil, fmt.Errorf("optimizer moments of %d and %d %s/%s values for %d parameters", (mt.End-mt.Start)/4, (vt.End-vt.Start)/4, mt.DType, vt.DType, n)
	}
	if okM {
		if err := json.Unmarshal([]byte(meta[MetaTrain]), &ck.Train); err != nil {
			return nil, fmt.Errorf("bad train metadata %q: %v", meta[MetaTrain], err)
		}
		if tc := ck.Train; tc.BatchSize < 1 || tc.BatchSize > MaxBatch || tc.MaxIters < 1 || tc.MaxIters > MaxSteps {
			return nil, fmt.Errorf("train metadata: batch size %d and max iterations %d must be in [1, %d] and [1, %d]", tc.BatchSize, tc.MaxIters, MaxBatch, int(MaxSteps))
		}
		if ck.RNGState, err = strconv.ParseUint(meta[MetaRNG], 10, 64); err != nil {
			return nil, fmt.Errorf("bad rng_state metadata %q", meta[MetaRNG])
		}
	}
	if wf != WeightsF32 {
		if err := CheckMemory("the "+wf.String()+" model "+cfg.jsonString(), InferenceBytes(cfg, wf)); err != nil {
			return nil, err
		}
		arena := newLowArena(cfg, wf)
		matrix := func(name string, k, n int) (linear, error) {
			return lowFromFile(wf, name, k, n, arena, sinks, checks), nil
		}
		m, err := newInference(cfg, wf, newOptions(nil).impl,
			func(name string, dst []float32) error {
				sinks[name] = f32Sink(dst)
				return nil
			}, matrix,
			func(k, n int) (linear, error) { return matrix(lowHead, k, n) })
		if err != nil {
			return nil, err
		}
		ck.Model = m
		return ck, nil
	}
	// The model, and the optimizer's moments and decay mask.
	need := ModelBytes(cfg, okM && keepOpt)
	if err := CheckMemory("the model "+cfg.jsonString(), need); err != nil {
		return nil, err
	}
	m, err := newModel(cfg)
	if err != nil {
		return nil, err
	}
	for _, x := range cfg.Tensors() {
		sinks[x.Name] = f32Sink(m.Params[x.Offset : x.Offset+x.Size()])
	}
	ck.Model = m
	if okM && keepOpt {
		mv, vv := make([]float32, n), make([]float32, n)
		sinks[optMPrefix], sinks[optVPrefix] = f32Sink(mv), f32Sink(vv)
		opt := newAdamW(cfg.DecaySpans(), mv, vv)
		opt.WeightDecay, opt.ClipNorm, opt.Step = ck.Train.WeightDecay, ck.Train.ClipNorm, step
		ck.Opt = opt
	}
	return ck, nil
}

// Resume returns a trainer that continues the run saved in ck on d, exactly
// where it stopped.
func (ck *Checkpoint) Resume(d *data.Dataset) (*Trainer, error) {
	if ck.Opt == nil {
		return nil, errors.New("gpt: the checkpoint has no optimizer state to resume from")
	}
	t, err := NewTrainer(ck.Model, d, ck.Train)
	if err != nil {
		return nil, err
	}
	t.Opt = ck.Opt
	t.Opt.Kernels = ck.Model.Impl()
	t.RNG.SetState(ck.RNGState)
	return t, nil
}
