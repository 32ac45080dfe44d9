package gpt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/simdgpt/simdgpt/internal/readfile"
)

// GPT-2 checkpoints: LoadGPT2 reads the weights of a GPT-2 family model
// (GPT-2's layout is this package's with tied embeddings: pre-LayerNorm
// blocks, tanh GELU, LayerNorm epsilon 1e-5, LM head wteᵀ) from either of
// two formats, told apart by their first bytes: Hugging Face's
// model.safetensors (load_hf.go) and llm.c's gpt2_*.bin (load_llmc.go).

// HFFile is the file name of a Hugging Face model's weights in its
// directory; HFConfigFile is its config.json beside it.
const (
	HFFile       = "model.safetensors"
	HFConfigFile = "config.json"
)

// Magic numbers of llm.c's files (their first int32, little-endian).
const (
	llmcModelMagic  = 20240326 // gpt2_*.bin model weights
	llmcTokensMagic = 20240520 // token files (gpt/data reads them)
)

// maxConfigJSON bounds the config.json LoadGPT2 reads.
const maxConfigJSON = 1 << 20

// LoadGPT2 reads a GPT-2 family checkpoint into a new model with tied
// embeddings (Config.TieEmbeddings), computing with the kernel
// implementation the options name. path is a Hugging Face model.safetensors
// (or a directory holding one), with the heads taken from a config.json
// beside it (n_head) or else from the width by GPT-2's family table
// (768→12, 1024→16, 1280→20, 1600→25), or an llm.c gpt2_*.bin (version 3,
// float32, or 5, bfloat16). The format is recognised from the file's
// content. Safetensors may be F32, F16 or BF16 (converted to float32), with
// or without the "transformer." prefix; GPT-2's attention mask buffers
// (attn.bias, attn.masked_bias) are ignored, and an lm_head.weight, when
// present, must equal wte.weight or the file is refused. llm.c's padding
// rows of wte (past its vocabulary V) are dropped. The file is read tensor by tensor into the model's parameters,
// every size checked against the file's length before anything is
// allocated; a file that does not fit (another format, a TinyGPT
// checkpoint, which gpt.Load reads, missing or misshapen tensors, a
// truncated file) is an error naming the file and what is wrong.
//
// With WithLoadWeights(f) for a low-bit f it returns the model
// Model.WithWeights(f) makes of the float32 one (the same matrices,
// bit for bit), for inference only. A safetensors file is read straight
// into it: the float32 tensors into their own, and each of the matrices
// (w_qkv, w_proj, w_fc, w_out of every block) through one float32
// buffer, converted before the next is read (bf16 from a BF16 file keeps
// the file's values exactly), so memory is the low-bit model
// (InferenceBytes) plus that buffer of 4·Width² floats, with no float32
// model at any time. An llm.c file is read as float32 and then converted.
func LoadGPT2(path string, opts ...Option) (*Model, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, HFFile)
	}
	// Streamed: sizes are checked against the file's as it is read.
	f, size, err := readfile.Open(path, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	configJSON, err := readConfigJSON(filepath.Join(filepath.Dir(path), HFConfigFile))
	if err != nil {
		return nil, fmt.Errorf("gpt.LoadGPT2 %s: %w", path, err)
	}
	m, err := loadGPT2(f, size, configJSON, opts...)
	if err != nil {
		return nil, fmt.Errorf("gpt.LoadGPT2 %s: %w", path, err)
	}
	return m, nil
}

// readConfigJSON returns the contents of the config.json at path, or nil
// when there is none; one that is not a regular file of at most
// maxConfigJSON bytes is an error.
func readConfigJSON(path string) ([]byte, error) {
	b, err := readfile.Read(path, maxConfigJSON)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// loadGPT2 is LoadGPT2 on the size bytes of r, with configJSON the
// contents of the config.json beside it (nil: none).
func loadGPT2(r io.ReaderAt, size int64, configJSON []byte, opts ...Option) (*Model, error) {
	if size < 8 {
		return nil, fmt.Errorf("%d bytes: too short to be a safetensors file or an llm.c checkpoint", size)
	}
	var head [9]byte
	n, err := r.ReadAt(head[:min(size, 9)], 0)
	if n < min(int(size), 9) {
		return nil, fmt.Errorf("reading the first bytes: %v", err)
	}
	if f := newOptions(opts).load; f > WeightsInt8 {
		return nil, fmt.Errorf("WithLoadWeights(%v): not a weights format", f)
	}
	switch binary.LittleEndian.Uint32(head[:4]) {
	case llmcModelMagic:
		m, err := loadLLMC(r, size, opts...)
		if f := newOptions(opts).load; err == nil && f != WeightsF32 {
			// llm.c's matrices are read whole, then converted.
			return m.WithWeights(f)
		}
		return m, err
	case llmcTokensMagic:
		return nil, errors.New("an llm.c token file (magic 20240520), not model weights")
	}
	if size > 8 && head[8] == '{' {
		return loadHF(r, size, configJSON, opts...)
	}
	return nil, fmt.Errorf("neither a safetensors file (8-byte header length, then '{') nor an llm.c checkpoint (magic %d): starts with % x", llmcModelMagic, head[:min(size, 9)])
}

// gpt2Heads returns GPT-2's number of heads for a width of its family
// (gpt2, gpt2-medium, gpt2-large, gpt2-xl: heads of 64), or 0.
func gpt2Heads(width int) int {
	switch width {
	case 768:
		return 12
	case 1024:
		return 16
	case 1280:
		return 20
	case 1600:
		return 25
	}
	return 0
}

// dtype is the element type of a tensor in a file, decoded to float32.
type dtype struct {
	name   string
	size   int                           // bytes per element
	decode func(dst []float32, b []byte) // len(b) = len(dst)·size, little-endian
}

var (
	dtypeF32  = dtype{"F32", 4, decodeF32}
	dtypeF16  = dtype{"F16", 2, decodeF16}
	dtypeBF16 = dtype{"BF16", 2, decodeBF16}
)

func decodeF32(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func decodeF16(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = f16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
}

func decodeBF16(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
	}
}

// f16ToF32 converts IEEE 754 binary16 bits to float32 (exactly: every
// half is a float32).
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0: // zero or subnormal: mant·2⁻²⁴
		f := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(math.Float32bits(f) | sign)
	case 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// tensorReader decodes tensors from a stream through one fixed buffer, so
// loading holds no copy of a tensor's bytes.
type tensorReader struct {
	r   io.Reader
	dt  dtype
	buf []byte
	row []float32 // one source row of a transposed read
}

func newTensorReader(r io.Reader, dt dtype, maxRow int) *tensorReader {
	return &tensorReader{r: r, dt: dt, buf: make([]byte, 1<<16), row: make([]float32, maxRow)}
}

// read fills dst with the next len(dst) elements of the stream, refusing
// values that are not finite.
func (t *tensorReader) read(name string, dst []float32) error {
	per := len(t.buf) / t.dt.size
	for done := 0; done < len(dst); {
		k := min(per, len(dst)-done)
		b := t.buf[:k*t.dt.size]
		if _, err := io.ReadFull(t.r, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		d := dst[done : done+k]
		t.dt.decode(d, b)
		for i, v := range d {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("tensor %s: element %d is %v", name, done+i, v)
			}
		}
		done += k
	}
	return nil
}

// readTransposed reads a rows×cols matrix stored row-major (PyTorch's
// Linear layout, out×in) into dst as its transpose, cols×rows (our in×out).
func (t *tensorReader) readTransposed(name string, dst []float32, rows, cols int) error {
	row := t.row[:cols]
	for o := 0; o < rows; o++ {
		if err := t.read(name, row); err != nil {
			return err
		}
		for i, v := range row {
			dst[i*rows+o] = v
		}
	}
	return nil
}

// skip discards n elements of the stream.
func (t *tensorReader) skip(name string, n int64) error {
	if _, err := io.CopyN(io.Discard, t.r, n*int64(t.dt.size)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("tensor %s: %w", name, err)
	}
	return nil
}

// bufferedSection returns a buffered reader of r's bytes [off, off+n).
func bufferedSection(r io.ReaderAt, off, n int64) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(r, off, n), 1<<16)
}
