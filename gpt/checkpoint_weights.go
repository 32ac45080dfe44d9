package gpt

import (
	"encoding/binary"
	"fmt"
	"github.com/simdgpt/simdgpt/internal/hugepage"
	"math"
	"strconv"
	"unsafe"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
	"github.com/simdgpt/simdgpt/kernels/lowbit"
)

// A checkpoint for inference (Model.SaveWeights) holds a model's weights
// without optimizer state. A float32 one is an ordinary checkpoint
// without the optimizer's tensors. One of a low-bit model (Model.
// WithWeights, WithLoadWeights) has the metadata MetaWeights ("bf16" or
// "int8") and holds its matrices as they are in memory, so that Load
// reads them with no conversion:
//
//   - every tensor of Config.Tensors but the blocks' four matrices
//     (h.N.attn.w_qkv, h.N.attn.w_proj, h.N.mlp.w_fc, h.N.mlp.w_out) and
//     the untied head w_lm: F32, as in every checkpoint;
//   - each of those matrices, and the LM head under the name w_lm (for a
//     tied model too: wte's conversion, which the model reads as its
//     head), of k inputs and n outputs, with g = lowbit.Groups(k):
//   - bf16: the tensor <name>, BF16 of shape [n, 32·g]: lowbit.BF16.Data,
//     row j holding output j's weights along k in groups of 32, each
//     group's 16-bit words interleaved by halves (element 2d is weight
//     d, element 2d+1 weight 16+d) and the last group of a row padded
//     with zero weights;
//   - int8: the tensor <name>, I8 of shape [n, 32·g]: the weights q of
//     row j, group by group (padded with zeros), and <name>.scale, F32 of
//     shape [n, g]: each group's scale, so that weight (j, p) is
//     scale[j, p/32]·q[j, p] (lowbit.Int8's blocks, split in two).
//
// Another reader of safetensors reads these tensors, but the bf16
// matrices' group interleaving is this package's.

// MetaWeights is the metadata key of a checkpoint whose matrices are in a
// low-bit format: "bf16" or "int8" (absent for float32).
const MetaWeights = "weights"

// scaleSuffix names an int8 matrix's scales: <name>.scale.
const scaleSuffix = ".scale"

// littleEndian is whether float32 values are stored in memory as
// safetensors stores them, so that a tensor's bytes are copied as they
// are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32Bytes returns v's little-endian bytes: v's memory itself on a
// little-endian machine, else an encoded copy.
func f32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// f32Sink is the sink that reads a tensor of len(dst) little-endian
// float32 values into dst: straight into its memory on a little-endian
// machine, else decoded piece by piece.
func f32Sink(dst []float32) safetensors.Sink {
	if littleEndian {
		return safetensors.Sink{Dst: f32Bytes(dst)}
	}
	return safetensors.Sink{Fn: func(off int64, p []byte) error {
		decodeF32(dst[off/4:off/4+int64(len(p)/4)], p)
		return nil
	}}
}

// lowMatrix is a matrix a low-bit checkpoint holds in its format: its
// name and its k inputs and n outputs.
type lowMatrix struct {
	name string
	k, n int
}

// lowMatrixList returns, in layout order, the matrices a low-bit checkpoint
// of cfg holds in its format: the blocks' four, then the head (w_lm).
func (c Config) lowMatrixList() []lowMatrix {
	var ms []lowMatrix
	for _, t := range c.Tensors() {
		if t.Name != lowHead && isLowMatrix(t.Name) {
			ms = append(ms, lowMatrix{t.Name, t.Shape[0], t.Shape[1]})
		}
	}
	return append(ms, lowMatrix{lowHead, c.Width, c.Vocab})
}

// SaveWeights writes m's weights in its format (see above: float32, or
// the low-bit matrices as they are) with the vocabulary (nil for token
// ids), step and extra metadata (as SaveWith's) to path atomically, as
// Save does, with no optimizer state: Load returns the model, which
// samples and evaluates exactly as m, and no optimizer (Resume refuses
// it). A key Save writes itself, or MetaWeights, in extra is an error.
func (m *Model) SaveWeights(path string, vocab *data.Vocab, step int, extra map[string]string) error {
	if step < 0 {
		return fmt.Errorf("gpt: SaveWeights: step %d is negative", step)
	}
	var ts []safetensors.Raw
	m.Config.eachTensor(&m.p, func(name string, shape []int, _ initKind, field *[]float32) {
		if m.wf == WeightsF32 || !isLowMatrix(name) {
			ts = append(ts, safetensors.Raw{Name: name, DType: "F32", Shape: shape, Data: f32Bytes(*field)})
		}
	})
	if m.wf != WeightsF32 {
		for i, x := range m.Config.lowMatrixList() {
			w := m.head
			if x.name != lowHead {
				bl := &m.lin[i/4]
				w = *[]*linear{&bl.qkv, &bl.proj, &bl.fc, &bl.out}[i%4]
			}
			ts = append(ts, lowRaw(x.name, w)...)
		}
	}
	meta := map[string]string{
		MetaFormat: formatName,
		MetaConfig: m.Config.jsonString(),
		MetaStep:   strconv.Itoa(step),
	}
	if m.wf != WeightsF32 {
		meta[MetaWeights] = m.wf.String()
	}
	if vocab != nil {
		meta[MetaVocab] = vocab.String()
	}
	for k, v := range extra {
		if reserved[k] {
			return fmt.Errorf("gpt: SaveWeights: extra metadata key %q is reserved", k)
		}
		meta[k] = v
	}
	b, err := safetensors.EncodeRaw(ts, meta)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// lowRaw returns the tensors of the low-bit matrix w named name (see
// above).
func lowRaw(name string, w linear) []safetensors.Raw {
	g := lowbit.Groups(w.k)
	if w.bf != nil {
		d := w.bf.Data[:w.n*g*lowbit.GroupSize]
		var b []byte
		if len(d) > 0 {
			b = unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), 2*len(d))
		}
		if !littleEndian {
			b = make([]byte, 2*len(d))
			for i, v := range d {
				binary.LittleEndian.PutUint16(b[2*i:], v)
			}
		}
		return []safetensors.Raw{{Name: name, DType: "BF16", Shape: []int{w.n, g * lowbit.GroupSize}, Data: b}}
	}
	q := make([]byte, w.n*g*lowbit.GroupSize)
	scale := make([]float32, w.n*g)
	for i := range scale {
		blk := &w.i8.Blocks[i]
		scale[i] = blk.Scale
		for j, v := range blk.Q {
			q[i*lowbit.GroupSize+j] = byte(v)
		}
	}
	return []safetensors.Raw{
		{Name: name, DType: "I8", Shape: []int{w.n, g * lowbit.GroupSize}, Data: q},
		{Name: name + scaleSuffix, DType: "F32", Shape: []int{w.n, g}, Data: f32Bytes(scale)},
	}
}

// checkLowTensors checks that byName holds the matrices of a checkpoint
// of cfg in the low-bit format f, of their dtypes and shapes.
func checkLowTensors(cfg Config, f Weights, byName map[string]safetensors.Entry) error {
	for _, x := range cfg.lowMatrixList() {
		g := lowbit.Groups(x.k)
		want := []struct {
			name, dtype string
			shape       []int
		}{{x.name, "BF16", []int{x.n, g * lowbit.GroupSize}}}
		if f == WeightsInt8 {
			want = []struct {
				name, dtype string
				shape       []int
			}{{x.name, "I8", []int{x.n, g * lowbit.GroupSize}}, {x.name + scaleSuffix, "F32", []int{x.n, g}}}
		}
		for _, w := range want {
			e, ok := byName[w.name]
			switch {
			case !ok:
				return fmt.Errorf("tensor %q is missing", w.name)
			case e.DType != w.dtype:
				return fmt.Errorf("tensor %q has dtype %s; a %v checkpoint's is %s", w.name, e.DType, f, w.dtype)
			case fmt.Sprint(e.Shape) != fmt.Sprint(w.shape):
				return fmt.Errorf("tensor %q has shape %v, the config needs %v", w.name, e.Shape, w.shape)
			}
		}
	}
	return nil
}

// lowArena is the memory of a low-bit model's matrices in one
// allocation, advised for huge pages (most matrices are near one huge
// page in size, so each on its own would get none): filling it takes a
// page fault per 2 MiB rather than per 4 KiB.
type lowArena struct {
	bf []uint16
	i8 []lowbit.Int8Block
}

// newLowArena returns the memory of the matrices of cfg's lowMatrixList
// in format f.
func newLowArena(cfg Config, f Weights) *lowArena {
	count := 0
	for _, x := range cfg.lowMatrixList() {
		count += x.n * lowbit.Groups(x.k)
	}
	a := &lowArena{}
	if f == WeightsBF16 {
		a.bf = make([]uint16, count*lowbit.GroupSize)
		hugepage.Advise(a.bf)
	} else {
		a.i8 = make([]lowbit.Int8Block, count)
		hugepage.Advise(a.i8)
	}
	return a
}

// bf16 returns an n×k BF16 matrix of zeros from a's memory, or a new one
// when a (nil: none) has too little left.
func (a *lowArena) bf16(n, k int) *lowbit.BF16 {
	c := n * lowbit.Groups(k) * lowbit.GroupSize
	if a == nil || c > len(a.bf) {
		return lowbit.NewBF16(n, k)
	}
	m := &lowbit.BF16{N: n, K: k, Data: a.bf[:c:c]}
	a.bf = a.bf[c:]
	return m
}

// int8 is bf16 for an Int8 matrix.
func (a *lowArena) int8(n, k int) *lowbit.Int8 {
	c := n * lowbit.Groups(k)
	if a == nil || c > len(a.i8) {
		return lowbit.NewInt8(n, k)
	}
	m := &lowbit.Int8{N: n, K: k, Blocks: a.i8[:c:c]}
	a.i8 = a.i8[c:]
	return m
}

// lowFromFile returns the matrix name of k inputs and n outputs in format
// f of a checkpoint (its tensors checked by checkLowTensors), in memory
// from a (nil: allocated on its own), and adds to sinks what reads the
// file's tensors into it: bf16 read as it is, int8 with its scales put
// back in its blocks. The matrix holds its weights once the sinks have
// been given the file's bytes (safetensors.Reader.ReadData) and check
// (added to checks) has passed. A padding weight that is not zero, an
// int8 weight of -128 (outside the symmetric range the kernels assume)
// or a scale that is negative or not finite is an error, of the sink or
// of the check.
func lowFromFile(f Weights, name string, k, n int, a *lowArena, sinks map[string]safetensors.Sink, checks *[]func() error) linear {
	g := lowbit.Groups(k)
	pad := g*lowbit.GroupSize - k
	out := linear{k: k, n: n}
	if f == WeightsBF16 {
		out.bf = a.bf16(n, k)
		d := out.bf.Data
		if littleEndian && len(d) > 0 {
			sinks[name] = safetensors.Sink{Dst: unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), 2*len(d))}
		} else {
			sinks[name] = safetensors.Sink{Fn: func(off int64, p []byte) error {
				for i := range len(p) / 2 {
					d[off/2+int64(i)] = binary.LittleEndian.Uint16(p[2*i:])
				}
				return nil
			}}
		}
		if pad > 0 {
			m := out.bf
			*checks = append(*checks, func() error {
				if err := checkBF16Padding(m); err != nil {
					return fmt.Errorf("tensor %q: %v", name, err)
				}
				return nil
			})
		}
		return out
	}
	out.i8 = a.int8(n, k)
	blocks := out.i8.Blocks
	// The pieces are whole groups of weights and whole scales
	// (safetensors.ChunkSize is a multiple of both).
	sinks[name] = safetensors.Sink{Fn: func(off int64, q []byte) error {
		first := int(off / lowbit.GroupSize)
		for j := range len(q) / lowbit.GroupSize {
			i := first + j
			src := q[j*lowbit.GroupSize : (j+1)*lowbit.GroupSize]
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&blocks[i].Q[0])), lowbit.GroupSize), src)
			if bad := checkInt8Group(src, i%g == g-1, pad); bad >= 0 {
				return fmt.Errorf("tensor %q: weight [%d, %d] is %d: weights are in [-127, 127], padding 0", name, i/g, (i%g)*lowbit.GroupSize+bad, int8(src[bad]))
			}
		}
		return nil
	}}
	sinks[name+scaleSuffix] = safetensors.Sink{Fn: func(off int64, sb []byte) error {
		first := int(off / 4)
		for j := range len(sb) / 4 {
			i := first + j
			s := math.Float32frombits(binary.LittleEndian.Uint32(sb[4*j:]))
			if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) || math.Signbit(float64(s)) {
				return fmt.Errorf("tensor %q: scale [%d, %d] is %v; scales are finite and >= 0", name+scaleSuffix, i/g, i%g, s)
			}
			blocks[i].Scale = s
		}
		return nil
	}}
	return out
}

// checkInt8Group returns the index in q (a group's 32 weights) of the
// first weight of -128 or, in the last group of a row (last) whose last
// pad weights are padding, a padding weight that is not 0; else -1.
func checkInt8Group(q []byte, last bool, pad int) int {
	if !last || pad == 0 {
		// Eight weights at a time: x = w^0x80… has a zero byte where w
		// has 0x80, and (x-0x01…)&^x&0x80… is nonzero exactly when x
		// has a zero byte. The loop below finds which.
		var any uint64
		for j := 0; j+8 <= len(q); j += 8 {
			x := binary.LittleEndian.Uint64(q[j:]) ^ 0x8080808080808080
			any |= (x - 0x0101010101010101) &^ x & 0x8080808080808080
		}
		if any == 0 && len(q)%8 == 0 {
			return -1
		}
	}
	for j, v := range q {
		if v == 0x80 || (last && j >= len(q)-pad && v != 0) {
			return j
		}
	}
	return -1
}

// checkBF16Padding refuses a BF16 matrix whose padding (the weights of
// the last group of each row past K) is not +0.
func checkBF16Padding(m *lowbit.BF16) error {
	s := m.Stride()
	for j := 0; j < m.N; j++ {
		row := m.Data[j*s : (j+1)*s]
		for p := m.K; p < s; p++ {
			// The position of column p within the row (see lowbit.BF16).
			g, q := p/lowbit.GroupSize*lowbit.GroupSize, p%lowbit.GroupSize
			i := g + 2*(q%(lowbit.GroupSize/2)) + q/(lowbit.GroupSize/2)
			if row[i] != 0 {
				return fmt.Errorf("padding weight [%d, %d] is %#04x, not +0", j, p, row[i])
			}
		}
	}
	return nil
}
