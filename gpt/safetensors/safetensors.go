// Package safetensors reads and writes float32 tensors in the safetensors
// format: an 8-byte little-endian header length, a JSON header mapping each
// tensor name to its dtype, shape and data_offsets (plus an optional
// "__metadata__" object of string values), then the tensors' bytes,
// little-endian, back to back.
//
// Encode also stores a CRC-32C of the data section in the metadata (key
// ChecksumKey) and Decode verifies it when present, so a damaged file is
// reported instead of loaded. Decode checks everything else it can too
// (header length, JSON, dtypes, shapes against offsets, offsets covering
// the data exactly) and returns an error, never a partial result.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"strconv"
)

// ChecksumKey is the metadata key of the data section's CRC-32C (decimal).
const ChecksumKey = "data_crc32c"

// maxHeader bounds the JSON header (as the reference implementation does).
const maxHeader = 100 << 20

// Tensor is one named float32 tensor (dtype F32); len(Data) must equal the
// product of Shape.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Encode returns the safetensors bytes of tensors (in the given order) with
// metadata (may be nil; ChecksumKey is added). Names must be unique, not
// "__metadata__", and each Data must match its Shape.
func Encode(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	header := map[string]any{}
	seen := map[string]bool{}
	off := 0
	for _, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" || seen[t.Name] {
			return nil, fmt.Errorf("safetensors: bad or repeated tensor name %q", t.Name)
		}
		seen[t.Name] = true
		for _, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("safetensors: tensor %q has a negative dimension in shape %v", t.Name, t.Shape)
			}
		}
		if n := numel(t.Shape); n != len(t.Data) {
			return nil, fmt.Errorf("safetensors: tensor %q has shape %v (%d elements) but %d values", t.Name, t.Shape, n, len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = entry{DType: "F32", Shape: shape, Offsets: [2]int{off, off + 4*len(t.Data)}}
		off += 4 * len(t.Data)
	}
	data := make([]byte, off)
	p := 0
	for _, t := range tensors {
		for _, v := range t.Data {
			binary.LittleEndian.PutUint32(data[p:], math.Float32bits(v))
			p += 4
		}
	}
	meta := map[string]string{}
	for k, v := range metadata {
		meta[k] = v
	}
	meta[ChecksumKey] = strconv.FormatUint(uint64(crc32.Checksum(data, castagnoli)), 10)
	header["__metadata__"] = meta
	js, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	out := make([]byte, 8, 8+len(js)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(js)))
	out = append(out, js...)
	return append(out, data...), nil
}

// Decode parses safetensors bytes into tensors (ordered by data offset) and
// metadata. Any inconsistency is an error naming what is wrong.
func Decode(b []byte) ([]Tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("safetensors: %d bytes, too short for the 8-byte header length (truncated file?)", len(b))
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > maxHeader || hl > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("safetensors: header length %d does not fit in a %d-byte file (truncated or not a safetensors file)", hl, len(b))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+hl], &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header is not valid JSON: %v", err)
	}
	data := b[8+hl:]
	meta := map[string]string{}
	type named struct {
		name string
		e    entry
	}
	var es []named
	for k, v := range raw {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: __metadata__ is not an object of strings: %v", err)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: bad header entry: %v", k, err)
		}
		if e.DType != "F32" {
			return nil, nil, fmt.Errorf("safetensors: tensor %q has dtype %q, only F32 is supported", k, e.DType)
		}
		es = append(es, named{k, e})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].e.Offsets[0] < es[j].e.Offsets[0] })
	pos := 0
	tensors := make([]Tensor, 0, len(es))
	for _, x := range es {
		n := 1
		for _, d := range x.e.Shape {
			if d < 0 || (d > 0 && n > math.MaxInt32/d) {
				return nil, nil, fmt.Errorf("safetensors: tensor %q has an impossible shape %v", x.name, x.e.Shape)
			}
			n *= d
		}
		s, e := x.e.Offsets[0], x.e.Offsets[1]
		if s != pos || e-s != 4*n || e > len(data) {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data_offsets [%d,%d] for shape %v do not follow the previous tensor (at %d) within the %d data bytes (truncated or corrupted file)", x.name, s, e, x.e.Shape, pos, len(data))
		}
		pos = e
		t := Tensor{Name: x.name, Shape: x.e.Shape, Data: make([]float32, n)}
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[s+4*i:]))
		}
		tensors = append(tensors, t)
	}
	if pos != len(data) {
		return nil, nil, fmt.Errorf("safetensors: the tensors cover %d of the %d data bytes (corrupted file)", pos, len(data))
	}
	if c, ok := meta[ChecksumKey]; ok {
		want, err := strconv.ParseUint(c, 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: bad %s %q", ChecksumKey, c)
		}
		if got := crc32.Checksum(data, castagnoli); uint64(got) != want {
			return nil, nil, fmt.Errorf("safetensors: data checksum %d does not match the header's %d (corrupted file)", got, want)
		}
	}
	return tensors, meta, nil
}
