// Package safetensors reads and writes float32 tensors in the safetensors
// format: an 8-byte little-endian header length, a JSON header mapping each
// tensor name to its dtype, shape and data_offsets (plus an optional
// "__metadata__" object of string values), then the tensors' bytes,
// little-endian, back to back.
//
// Encode also stores a CRC-32C of the whole file in the metadata (key
// ChecksumKey: eight lower-case hexadecimal digits, computed over every byte
// of the file, header length and header included, with those eight digits
// read as "00000000"), so that a damaged byte anywhere, in a tensor or in
// the header's shapes and metadata, is reported instead of loaded: CRC-32C
// detects every error of up to 3 bits and every burst of up to 32 bits.
// The file stays a plain safetensors file that other readers load (the
// checksum is one more metadata string).
//
// Decode verifies that checksum, or the data-only checksum of older files
// (DataChecksumKey, which leaves the header unprotected; HeaderVerified
// tells the two apart), and refuses a file with neither. It checks
// everything else it can too (header length, JSON, dtypes, shapes against
// offsets, offsets covering the data exactly) and returns an error, never a
// partial result.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"strconv"
)

// ChecksumKey is the metadata key of the whole file's CRC-32C (see the
// package comment).
const ChecksumKey = "crc32c"

// DataChecksumKey is the metadata key of the data section's CRC-32C
// (decimal) that files written before ChecksumKey existed carry; Decode
// still verifies it.
const DataChecksumKey = "data_crc32c"

// checksumField is how the checksum appears in a header Encode writes;
// JSON escapes every quote inside a string, so it cannot occur elsewhere.
var checksumField = []byte(`"` + ChecksumKey + `":"`)

// checksumPlaceholder stands for the checksum's digits while it is computed.
var checksumPlaceholder = []byte("00000000")

// HeaderVerified reports whether metadata returned by Decode came from a
// file whose every byte was verified (ChecksumKey), rather than only its
// tensor data (an older file with DataChecksumKey).
func HeaderVerified(meta map[string]string) bool {
	_, ok := meta[ChecksumKey]
	return ok
}

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
// "__metadata__", and each Data must match its Shape. What Decode would
// refuse is an error: a tensor of more than math.MaxInt32 elements, a
// header (names, shapes and metadata) above 100 MiB.
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
		if int64(len(t.Data)) > math.MaxInt32 {
			return nil, fmt.Errorf("safetensors: tensor %q has %d elements, more than the limit of %d a reader accepts", t.Name, len(t.Data), math.MaxInt32)
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
	delete(meta, DataChecksumKey)
	meta[ChecksumKey] = string(checksumPlaceholder)
	header["__metadata__"] = meta
	js, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	if len(js) > maxHeader {
		return nil, fmt.Errorf("safetensors: a header of %d bytes, more than the limit of %d a reader accepts", len(js), maxHeader)
	}
	out := make([]byte, 8, 8+len(js)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(js)))
	out = append(out, js...)
	out = append(out, data...)
	at, err := findChecksum(out[8 : 8+len(js)])
	if err != nil || at < 0 {
		return nil, fmt.Errorf("safetensors: internal error: checksum field not found once in the header (%v)", err)
	}
	at += 8
	hex.Encode(out[at:at+8], binary.BigEndian.AppendUint32(nil, fileChecksum(out, at)))
	return out, nil
}

// findChecksum returns the offset in header of the checksum's eight digits,
// or -1 if the header has no checksum field; a field that appears more than
// once or is not eight lower-case hexadecimal digits and a quote is an
// error.
func findChecksum(header []byte) (int, error) {
	i := bytes.Index(header, checksumField)
	if i < 0 {
		return -1, nil
	}
	if bytes.Count(header, checksumField) > 1 {
		return 0, fmt.Errorf("safetensors: the header holds %s more than once (corrupted file)", ChecksumKey)
	}
	at := i + len(checksumField)
	if len(header) < at+9 || header[at+8] != '"' {
		return 0, fmt.Errorf("safetensors: %s is not 8 hexadecimal digits (corrupted file)", ChecksumKey)
	}
	for _, c := range header[at : at+8] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, fmt.Errorf("safetensors: %s %q is not 8 lower-case hexadecimal digits (corrupted file)", ChecksumKey, header[at:at+8])
		}
	}
	return at, nil
}

// fileChecksum is the CRC-32C of b with b[at:at+8] read as the placeholder.
func fileChecksum(b []byte, at int) uint32 {
	c := crc32.Update(0, castagnoli, b[:at])
	c = crc32.Update(c, castagnoli, checksumPlaceholder)
	return crc32.Update(c, castagnoli, b[at+8:])
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
	// The checksum first: a damaged file is reported as such, whatever the
	// damage would make of the header.
	at, err := findChecksum(b[8 : 8+hl])
	if err != nil {
		return nil, nil, err
	}
	var sum string
	if at >= 0 {
		at += 8
		sum = string(b[at : at+8])
		want, _ := strconv.ParseUint(sum, 16, 32)
		if got := fileChecksum(b, int(at)); uint64(got) != want {
			return nil, nil, fmt.Errorf("safetensors: the file's checksum %08x does not match the %s %s in its header (truncated or corrupted file)", got, ChecksumKey, sum)
		}
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
	if c, ok := meta[ChecksumKey]; ok != (at >= 0) || (ok && c != sum) {
		return nil, nil, fmt.Errorf("safetensors: the header's %s is not in the form Encode writes (corrupted file?)", ChecksumKey)
	}
	if at < 0 {
		c, ok := meta[DataChecksumKey]
		if !ok {
			return nil, nil, fmt.Errorf("safetensors: the header has no checksum (%s), so damage cannot be told apart (corrupted file, or not written by this package)", ChecksumKey)
		}
		want, err := strconv.ParseUint(c, 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: bad %s %q", DataChecksumKey, c)
		}
		if got := crc32.Checksum(data, castagnoli); uint64(got) != want {
			return nil, nil, fmt.Errorf("safetensors: data checksum %d does not match the header's %d (corrupted file)", got, want)
		}
	}
	return tensors, meta, nil
}
