package gpt

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

// A float64 GPT-2 written from its definition, with its weights named and
// shaped as in Hugging Face's GPT-2 (Conv1D weights in×out), and minimal
// writers of the two checkpoint formats LoadGPT2 reads: the oracle of the
// loader tests. Nothing here uses the package's model code.

// gpt2Spec is the shape of a test GPT-2.
type gpt2Spec struct{ L, H, C, V, T int }

// gpt2Params are a GPT-2's weights by their Hugging Face names.
type gpt2Params struct {
	spec  gpt2Spec
	names []string // in GPT-2's order
	shape map[string][]int
	t     map[string][]float64
}

// gpt2Names lists the tensors of s in GPT-2's order with their shapes.
func gpt2Names(s gpt2Spec) ([]string, map[string][]int) {
	C := s.C
	shape := map[string][]int{"wte.weight": {s.V, C}, "wpe.weight": {s.T, C}}
	names := []string{"wte.weight", "wpe.weight"}
	for l := 0; l < s.L; l++ {
		p := "h." + strconv.Itoa(l) + "."
		for _, e := range []struct {
			n string
			s []int
		}{
			{"ln_1.weight", []int{C}}, {"ln_1.bias", []int{C}},
			{"attn.c_attn.weight", []int{C, 3 * C}}, {"attn.c_attn.bias", []int{3 * C}},
			{"attn.c_proj.weight", []int{C, C}}, {"attn.c_proj.bias", []int{C}},
			{"ln_2.weight", []int{C}}, {"ln_2.bias", []int{C}},
			{"mlp.c_fc.weight", []int{C, 4 * C}}, {"mlp.c_fc.bias", []int{4 * C}},
			{"mlp.c_proj.weight", []int{4 * C, C}}, {"mlp.c_proj.bias", []int{C}},
		} {
			names = append(names, p+e.n)
			shape[p+e.n] = e.s
		}
	}
	names = append(names, "ln_f.weight", "ln_f.bias")
	shape["ln_f.weight"], shape["ln_f.bias"] = []int{C}, []int{C}
	return names, shape
}

// randomGPT2 returns random weights of s, each rounded by round (to the
// precision of the file format they will be written in): matrices and
// embeddings of standard deviation 0.3, LayerNorm gains 1±0.1, biases 0.1.
func randomGPT2(s gpt2Spec, seed uint64, round func(float64) float64) *gpt2Params {
	names, shape := gpt2Names(s)
	p := &gpt2Params{spec: s, names: names, shape: shape, t: map[string][]float64{}}
	r := rng.New(seed)
	for _, n := range names {
		size := 1
		for _, d := range shape[n] {
			size *= d
		}
		v := make([]float64, size)
		for i := range v {
			x := r.Normal()
			switch {
			case len(shape[n]) == 2:
				x *= 0.3
			case n[len(n)-6:] == "weight": // LayerNorm gain
				x = 1 + 0.1*x
			default:
				x *= 0.1
			}
			v[i] = round(x)
		}
		p.t[n] = v
	}
	return p
}

// clone returns a deep copy of p.
func (p *gpt2Params) clone() *gpt2Params {
	q := &gpt2Params{spec: p.spec, names: p.names, shape: p.shape, t: map[string][]float64{}}
	for n, v := range p.t {
		q.t[n] = slices.Clone(v)
	}
	return q
}

// refLayerNorm is LayerNorm over the rows of x with GPT-2's epsilon 1e-5.
func refLayerNorm(x [][]float64, w, b []float64) [][]float64 {
	out := make([][]float64, len(x))
	for i, row := range x {
		var mean, v float64
		for _, e := range row {
			mean += e
		}
		mean /= float64(len(row))
		for _, e := range row {
			v += (e - mean) * (e - mean)
		}
		v /= float64(len(row))
		o := make([]float64, len(row))
		for j, e := range row {
			o[j] = (e-mean)/math.Sqrt(v+1e-5)*w[j] + b[j]
		}
		out[i] = o
	}
	return out
}

// refConv1D is GPT-2's Conv1D: x [n,in] · w [in,out] + b.
func refConv1D(x [][]float64, w, b []float64) [][]float64 {
	out := make([][]float64, len(x))
	o := len(b)
	for i, row := range x {
		y := slices.Clone(b)
		for k, e := range row {
			for j := 0; j < o; j++ {
				y[j] += e * w[k*o+j]
			}
		}
		out[i] = y
	}
	return out
}

// refLogits returns GPT-2's logits [len(tokens)][V] for one sequence:
// token plus position embedding, pre-LayerNorm blocks of causal softmax
// attention (scores scaled by 1/√D) and a tanh-GELU MLP, a final LayerNorm
// and the head tied to the token embedding.
func (p *gpt2Params) refLogits(tokens []int32) [][]float64 {
	s := p.spec
	C, D := s.C, s.C/s.H
	n := len(tokens)
	x := make([][]float64, n)
	for i, tok := range tokens {
		x[i] = make([]float64, C)
		for j := range x[i] {
			x[i][j] = p.t["wte.weight"][int(tok)*C+j] + p.t["wpe.weight"][i*C+j]
		}
	}
	for l := 0; l < s.L; l++ {
		w := func(name string) []float64 { return p.t["h."+strconv.Itoa(l)+"."+name] }
		qkv := refConv1D(refLayerNorm(x, w("ln_1.weight"), w("ln_1.bias")), w("attn.c_attn.weight"), w("attn.c_attn.bias"))
		y := make([][]float64, n)
		for i := range y {
			y[i] = make([]float64, C)
		}
		for h := 0; h < s.H; h++ {
			for i := 0; i < n; i++ {
				q := qkv[i][h*D : (h+1)*D]
				sc := make([]float64, i+1)
				mx := math.Inf(-1)
				for j := 0; j <= i; j++ {
					k := qkv[j][C+h*D : C+(h+1)*D]
					for e := range q {
						sc[j] += q[e] * k[e]
					}
					sc[j] /= math.Sqrt(float64(D))
					mx = math.Max(mx, sc[j])
				}
				var sum float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - mx)
					sum += sc[j]
				}
				for j := 0; j <= i; j++ {
					v := qkv[j][2*C+h*D : 2*C+(h+1)*D]
					for e := range v {
						y[i][h*D+e] += sc[j] / sum * v[e]
					}
				}
			}
		}
		att := refConv1D(y, w("attn.c_proj.weight"), w("attn.c_proj.bias"))
		for i := range x {
			for j := range x[i] {
				x[i][j] += att[i][j]
			}
		}
		f := refConv1D(refLayerNorm(x, w("ln_2.weight"), w("ln_2.bias")), w("mlp.c_fc.weight"), w("mlp.c_fc.bias"))
		for _, row := range f {
			for j, e := range row {
				row[j] = 0.5 * e * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(e+0.044715*e*e*e)))
			}
		}
		mlp := refConv1D(f, w("mlp.c_proj.weight"), w("mlp.c_proj.bias"))
		for i := range x {
			for j := range x[i] {
				x[i][j] += mlp[i][j]
			}
		}
	}
	hf := refLayerNorm(x, p.t["ln_f.weight"], p.t["ln_f.bias"])
	logits := make([][]float64, n)
	wte := p.t["wte.weight"]
	for i := range hf {
		logits[i] = make([]float64, s.V)
		for v := range logits[i] {
			for j := 0; j < C; j++ {
				logits[i][v] += hf[i][j] * wte[v*C+j]
			}
		}
	}
	return logits
}

// Rounding to the file formats' precisions, and decoding of their bits,
// written independently of the loader's bit manipulations.

// halfValue is the value of IEEE binary16 bits (finite ones).
func halfValue(b uint16) float64 {
	e, m := int(b>>10&0x1f), float64(b&0x3ff)
	v := math.Ldexp(m, -24) // subnormal
	if e == 0x1f {
		v = math.Inf(1)
		if m != 0 {
			return math.NaN()
		}
	} else if e > 0 {
		v = math.Ldexp(1+m/1024, e-15)
	}
	if b>>15 != 0 {
		v = -v
	}
	return v
}

// bf16Value is the value of bfloat16 bits (finite ones).
func bf16Value(b uint16) float64 {
	e, m := int(b>>7&0xff), float64(b&0x7f)
	v := math.Ldexp(m, -133)
	if e == 0xff {
		v = math.Inf(1)
		if m != 0 {
			return math.NaN()
		}
	} else if e > 0 {
		v = math.Ldexp(1+m/128, e-127)
	}
	if b>>15 != 0 {
		v = -v
	}
	return v
}

// halfPositive holds the values of the finite non-negative halves in bit
// order (which is value order).
var halfPositive = func() []float64 {
	v := make([]float64, 0x7c00)
	for b := range v {
		v[b] = halfValue(uint16(b))
	}
	return v
}()

// halfBits rounds x to the nearest half (ties to even bits), finite x only.
func halfBits(x float64) uint16 {
	a := math.Abs(x)
	i := sort.SearchFloat64s(halfPositive, a) // first >= a
	if i == len(halfPositive) {
		i-- // beyond 65504: never in these tests
	} else if i > 0 && (a-halfPositive[i-1] < halfPositive[i]-a || (a-halfPositive[i-1] == halfPositive[i]-a && (i-1)%2 == 0)) {
		i--
	}
	b := uint16(i)
	if math.Signbit(x) {
		b |= 0x8000
	}
	return b
}

// bf16Bits rounds x (via float32) to bfloat16, ties to even.
func bf16Bits(x float64) uint16 {
	u := math.Float32bits(float32(x))
	return uint16((u + 0x7fff + (u >> 16 & 1)) >> 16)
}

func roundF32(x float64) float64  { return float64(float32(x)) }
func roundF16(x float64) float64  { return halfValue(halfBits(x)) }
func roundBF16(x float64) float64 { return bf16Value(bf16Bits(x)) }

// encodeValues appends v in the safetensors dtype dt, little-endian.
func encodeValues(b []byte, dt string, v []float64) []byte {
	for _, x := range v {
		switch dt {
		case "F32":
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
		case "F16":
			b = binary.LittleEndian.AppendUint16(b, halfBits(x))
		case "BF16":
			b = binary.LittleEndian.AppendUint16(b, bf16Bits(x))
		default:
			panic("encodeValues: dtype " + dt)
		}
	}
	return b
}

// hfOptions vary the safetensors files writeHF makes.
type hfOptions struct {
	prefix  string           // "transformer." or ""
	buffers bool             // add GPT-2's attn.bias and attn.masked_bias buffers
	lmHead  []float64        // add lm_head.weight with these values
	omit    string           // leave this tensor out
	extra   map[string][]int // add F32 zero tensors of these names and shapes
	meta    map[string]string
	hook    func(header map[string]any) // changes the header before it is written
}

// writeHF returns p as a Hugging Face safetensors file with every weight
// in dtype dt, tensors in name order (as Hugging Face writes them).
func writeHF(p *gpt2Params, dt string, o hfOptions) []byte {
	type tensor struct {
		dt    string
		shape []int
		v     []float64
	}
	ts := map[string]tensor{}
	for _, n := range p.names {
		if n != o.omit {
			ts[o.prefix+n] = tensor{dt, p.shape[n], p.t[n]}
		}
	}
	s := p.spec
	if o.buffers {
		for l := 0; l < s.L; l++ {
			mask := make([]float64, s.T*s.T)
			for i := 0; i < s.T; i++ {
				for j := 0; j <= i; j++ {
					mask[i*s.T+j] = 1
				}
			}
			ts[o.prefix+"h."+strconv.Itoa(l)+".attn.bias"] = tensor{"F32", []int{1, 1, s.T, s.T}, mask}
			ts[o.prefix+"h."+strconv.Itoa(l)+".attn.masked_bias"] = tensor{"F32", []int{}, []float64{-1e4}}
		}
	}
	if o.lmHead != nil {
		ts["lm_head.weight"] = tensor{dt, []int{s.V, s.C}, o.lmHead}
	}
	for n, sh := range o.extra {
		size := 1
		for _, d := range sh {
			size *= d
		}
		ts[n] = tensor{"F32", sh, make([]float64, size)}
	}
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	if o.meta != nil {
		header["__metadata__"] = o.meta
	}
	var data []byte
	for _, n := range names {
		t := ts[n]
		start := len(data)
		data = encodeValues(data, t.dt, t.v)
		header[n] = map[string]any{"dtype": t.dt, "shape": t.shape, "data_offsets": []int{start, len(data)}}
	}
	if o.hook != nil {
		o.hook(header)
	}
	hj, err := json.Marshal(header)
	if err != nil {
		panic(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hj)))
	return append(append(out, hj...), data...)
}

// writeLLMC returns p as an llm.c gpt2_*.bin of version 3 (float32) or 5
// (bfloat16), its vocabulary padded to vp rows filled with 1000 (which
// must never reach a logit).
func writeLLMC(p *gpt2Params, version, vp int) []byte {
	s := p.spec
	C := s.C
	dt := map[int]string{3: "F32", 5: "BF16"}[version]
	hdr := make([]int32, 256)
	copy(hdr, []int32{20240326, int32(version), int32(s.T), int32(s.V), int32(s.L), int32(s.H), int32(C), int32(vp)})
	var b []byte
	for _, h := range hdr {
		b = binary.LittleEndian.AppendUint32(b, uint32(h))
	}
	b = encodeValues(b, dt, p.t["wte.weight"])
	pad := make([]float64, (vp-s.V)*C)
	for i := range pad {
		pad[i] = 1000
	}
	b = encodeValues(b, dt, pad)
	b = encodeValues(b, dt, p.t["wpe.weight"])
	// transposed returns the in×out matrix w as llm.c's out×in.
	transposed := func(w []float64, in, out int) []float64 {
		t := make([]float64, len(w))
		for i := 0; i < in; i++ {
			for o := 0; o < out; o++ {
				t[o*in+i] = w[i*out+o]
			}
		}
		return t
	}
	for _, kind := range []struct {
		name    string
		in, out int // a matrix, or 0
	}{
		{"ln_1.weight", 0, 0}, {"ln_1.bias", 0, 0},
		{"attn.c_attn.weight", C, 3 * C}, {"attn.c_attn.bias", 0, 0},
		{"attn.c_proj.weight", C, C}, {"attn.c_proj.bias", 0, 0},
		{"ln_2.weight", 0, 0}, {"ln_2.bias", 0, 0},
		{"mlp.c_fc.weight", C, 4 * C}, {"mlp.c_fc.bias", 0, 0},
		{"mlp.c_proj.weight", 4 * C, C}, {"mlp.c_proj.bias", 0, 0},
	} {
		for l := 0; l < s.L; l++ {
			v := p.t["h."+strconv.Itoa(l)+"."+kind.name]
			if kind.in > 0 {
				v = transposed(v, kind.in, kind.out)
			}
			b = encodeValues(b, dt, v)
		}
	}
	b = encodeValues(b, dt, p.t["ln_f.weight"])
	return encodeValues(b, dt, p.t["ln_f.bias"])
}

// writeFiles writes the files (name → contents; nil contents: no file)
// into a new directory under dir and returns the path of first there.
func writeFiles(dir string, first string, files map[string][]byte) (string, error) {
	d, err := os.MkdirTemp(dir, "model")
	if err != nil {
		return "", err
	}
	for n, b := range files {
		if b == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(d, n), b, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(d, first), nil
}
