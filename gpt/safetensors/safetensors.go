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
//
// ReadHeader reads only the header of a file of any dtypes, checked with
// the same parser, for readers that then read the tensors they want from
// the file themselves.
package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
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

// shapeElements returns the number of elements of shape (0 when a
// dimension is 0), or an error naming the tensor when a dimension is
// negative or the product of its nonzero dimensions is above
// math.MaxInt32, the most elements a reader accepts (so that no product
// of dimensions, in any order, overflows a reader's int).
func shapeElements(name string, shape []int) (int, error) {
	n, zero := 1, false
	for _, d := range shape {
		switch {
		case d < 0:
			return 0, fmt.Errorf("safetensors: tensor %q has a negative dimension in shape %v", name, shape)
		case d == 0:
			zero = true
		case n > math.MaxInt32/d:
			return 0, fmt.Errorf("safetensors: tensor %q: shape %v has more than the %d elements a reader accepts", name, shape, math.MaxInt32)
		default:
			n *= d
		}
	}
	if zero {
		return 0, nil
	}
	return n, nil
}

// Encode returns the safetensors bytes of tensors (in the given order) with
// metadata (may be nil; ChecksumKey is added). Names must be unique, not
// "__metadata__", and each Data must match its Shape. What Decode would
// refuse is an error naming the tensor: a negative dimension, a shape
// whose nonzero dimensions multiply to more than math.MaxInt32 elements
// (even with another dimension 0, so that no product of a shape overflows
// an int), a header (names, shapes and metadata) above 100 MiB.
func Encode(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	enc := make([]encTensor, len(tensors))
	for i, t := range tensors {
		enc[i] = encTensor{Raw: Raw{Name: t.Name, DType: "F32", Shape: t.Shape}, f32: t.Data, elems: len(t.Data)}
	}
	return encode(enc, metadata)
}

// Raw is one named tensor of any dtype DTypeSize knows, given as its
// little-endian bytes: len(Data) must be the product of Shape times the
// dtype's size.
type Raw struct {
	Name  string
	DType string
	Shape []int
	Data  []byte
}

// encTensor is a tensor to encode: Raw's bytes, or Encode's float32
// values (f32 non-nil); elems is its element count.
type encTensor struct {
	Raw
	f32   []float32
	elems int
}

// EncodeRaw is Encode for tensors of any dtype (F32, BF16, I8, ...):
// the same checks, the same layout (data 8-byte aligned after the
// header, tensors back to back in the given order) and the same
// whole-file checksum. Each tensor's bytes start at a multiple of its
// element size when every tensor before it has a multiple of 8 bytes.
func EncodeRaw(tensors []Raw, metadata map[string]string) ([]byte, error) {
	for _, t := range tensors {
		size := DTypeSize(t.DType)
		if size == 0 {
			return nil, fmt.Errorf("safetensors: tensor %q has dtype %q, which has no known element size", t.Name, t.DType)
		}
		if len(t.Data)%size != 0 {
			return nil, fmt.Errorf("safetensors: tensor %q: %d bytes are not whole %s elements", t.Name, len(t.Data), t.DType)
		}
	}
	enc := make([]encTensor, len(tensors))
	for i, t := range tensors {
		enc[i] = encTensor{Raw: t, elems: len(t.Data) / DTypeSize(t.DType)}
	}
	return encode(enc, metadata)
}

// encode is Encode and EncodeRaw: tensors' elems is their element count.
func encode(tensors []encTensor, metadata map[string]string) ([]byte, error) {
	header := map[string]any{}
	seen := map[string]bool{}
	off := 0
	for _, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" || seen[t.Name] {
			return nil, fmt.Errorf("safetensors: bad or repeated tensor name %q", t.Name)
		}
		seen[t.Name] = true
		n, err := shapeElements(t.Name, t.Shape)
		if err != nil {
			return nil, err
		}
		if n != t.elems {
			return nil, fmt.Errorf("safetensors: tensor %q has shape %v (%d elements) but %d values", t.Name, t.Shape, n, t.elems)
		}
		if int64(t.elems) > math.MaxInt32 {
			return nil, fmt.Errorf("safetensors: tensor %q has %d elements, more than the limit of %d a reader accepts", t.Name, t.elems, math.MaxInt32)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		size := DTypeSize(t.DType)
		header[t.Name] = entry{DType: t.DType, Shape: shape, Offsets: [2]int{off, off + size*t.elems}}
		off += size * t.elems
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
	out := make([]byte, 8+len(js)+off)
	binary.LittleEndian.PutUint64(out, uint64(len(js)))
	copy(out[8:], js)
	p := 8 + len(js)
	for _, t := range tensors {
		if t.f32 != nil {
			for _, v := range t.f32 {
				binary.LittleEndian.PutUint32(out[p:], math.Float32bits(v))
				p += 4
			}
		} else {
			p += copy(out[p:], t.Data)
		}
	}
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
// metadata. Any inconsistency is an error naming what is wrong; a tensor
// of a dtype other than F32 is one.
func Decode(b []byte) ([]Tensor, map[string]string, error) {
	h, err := verify(b, "F32", true)
	if err != nil {
		return nil, nil, err
	}
	data := b[h.DataStart:]
	tensors := make([]Tensor, 0, len(h.Tensors))
	for _, e := range h.Tensors {
		s, end := int(e.Start), int(e.End)
		t := Tensor{Name: e.Name, Shape: e.Shape, Data: make([]float32, (end-s)/4)}
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[s+4*i:]))
		}
		tensors = append(tensors, t)
	}
	return tensors, h.Metadata, nil
}

// Verify checks the safetensors file b (all its bytes, as read or mapped)
// as Decode does, for tensors of any dtype, and returns its header
// without copying any tensor: tensor e's bytes are
// b[DataStart+e.Start : DataStart+e.End]. The checksum is verified first
// (ChecksumKey, or an older file's DataChecksumKey; a file with neither
// is an error), then the header, every tensor of a dtype DTypeSize
// knows spanning exactly its shape's bytes, and the tensors covering the
// data section exactly, back to back. A tensor of an unknown dtype is an
// error.
func Verify(b []byte) (*Header, error) {
	return verify(b, "", true)
}

// VerifyChecksum checks the whole-file checksum (ChecksumKey) of the
// safetensors file b, the one pass over every byte Verify makes; a file
// without it is left to VerifyHeader, as are the other checks. Its
// errors come first: a damaged file is reported as such, whatever the
// damage would make of the header. VerifyChecksum(b) and then
// VerifyHeader(b) without error is Verify(b) without error; the two may
// run at the same time (the checksum over the tensors while they are
// read), the checksum's error taking precedence over any other.
func VerifyChecksum(b []byte) error {
	_, _, err := checksum(b, true)
	return err
}

// VerifyHeader checks b as Verify does but for the whole-file checksum
// (see VerifyChecksum), and returns its header.
func VerifyHeader(b []byte) (*Header, error) {
	return verify(b, "", false)
}

// checksum returns the header length of b and the offset in b of its
// checksum's digits (-1 for a file without one), checking the checksum
// when check is set.
func checksum(b []byte, check bool) (hl int64, at int, err error) {
	if len(b) < 8 {
		return 0, 0, tooShort(int64(len(b)))
	}
	if hl, err = headerLength(b[:8], int64(len(b))); err != nil {
		return 0, 0, err
	}
	if at, err = findChecksum(b[8 : 8+hl]); err != nil || at < 0 {
		return hl, at, err
	}
	at += 8
	if check {
		sum := string(b[at : at+8])
		want, _ := strconv.ParseUint(sum, 16, 32)
		if got := fileChecksum(b, at); uint64(got) != want {
			return 0, 0, fileChecksumError(got, sum)
		}
	}
	return hl, at, nil
}

// verify is Verify allowing only the dtype only (any known one when only
// is empty), with the whole-file checksum checked first when check is set.
func verify(b []byte, only string, check bool) (*Header, error) {
	hl, at, err := checksum(b, check)
	if err != nil {
		return nil, err
	}
	var sum string
	if at >= 0 {
		sum = string(b[at : at+8])
	}
	h, want, err := checkHeader(b[8:8+hl], int64(len(b)), only, at >= 0, sum)
	if err != nil {
		return nil, err
	}
	if at < 0 {
		if got := crc32.Checksum(b[8+hl:], castagnoli); got != want {
			return nil, dataChecksumError(got, want)
		}
	}
	return h, nil
}

// checkHeader parses and checks hdr, the header of a file of size bytes,
// as verify does after the whole-file checksum: whole tells whether the
// header holds that checksum (its digits sum). For a file without it, it
// returns the data section's checksum its header states (DataChecksumKey),
// which the caller verifies.
func checkHeader(hdr []byte, size int64, only string, whole bool, sum string) (*Header, uint32, error) {
	h, err := parseHeader(hdr, size, only)
	if err != nil {
		return nil, 0, err
	}
	// parseHeader leaves no overlaps: the tensors cover the data exactly
	// when each starts where the one before it ends and the last ends at
	// the end.
	pos := int64(0)
	for _, e := range h.Tensors {
		if DTypeSize(e.DType) == 0 {
			return nil, 0, fmt.Errorf("safetensors: tensor %q has dtype %q, which this package does not read", e.Name, e.DType)
		}
		if e.Start != pos {
			return nil, 0, fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] do not follow the previous tensor (at %d) (corrupted file)", e.Name, e.Start, e.End, pos)
		}
		pos = e.End
	}
	if pos != h.DataLen {
		return nil, 0, fmt.Errorf("safetensors: the tensors cover %d of the %d data bytes (corrupted file)", pos, h.DataLen)
	}
	meta := h.Metadata
	if c, ok := meta[ChecksumKey]; ok != whole || (ok && c != sum) {
		return nil, 0, fmt.Errorf("safetensors: the header's %s is not in the form Encode writes (corrupted file?)", ChecksumKey)
	}
	if whole {
		return h, 0, nil
	}
	c, ok := meta[DataChecksumKey]
	if !ok {
		return nil, 0, fmt.Errorf("safetensors: the header has no checksum (%s), so damage cannot be told apart (corrupted file, or not written by this package)", ChecksumKey)
	}
	want, err := strconv.ParseUint(c, 10, 32)
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: bad %s %q", DataChecksumKey, c)
	}
	return h, uint32(want), nil
}

// dataChecksumError is the error of a data section whose checksum got is
// not the want its header states (DataChecksumKey).
func dataChecksumError(got, want uint32) error {
	return fmt.Errorf("safetensors: data checksum %d does not match the header's %d (corrupted file)", got, want)
}

// fileChecksumError is the error of a file whose checksum got is not the
// one its header holds (digits sum).
func fileChecksumError(got uint32, sum string) error {
	return fmt.Errorf("safetensors: the file's checksum %08x does not match the %s %s in its header (truncated or corrupted file)", got, ChecksumKey, sum)
}

// Header is a safetensors file's header, checked: every tensor's bytes lie
// within the data section, no two tensors share a byte, and a tensor of a
// dtype whose element size DTypeSize knows spans exactly its shape's bytes.
type Header struct {
	Tensors   []Entry           // ordered by data offsets (then by name)
	Metadata  map[string]string // "__metadata__"; empty, not nil, without it
	DataStart int64             // where the data section starts in the file: 8 + the header length
	DataLen   int64             // bytes in the data section, to the end of the file
}

// Entry is one tensor of a Header.
type Entry struct {
	Name       string
	DType      string // as in the file: "F32", "F16", "BF16", ...
	Shape      []int
	Start, End int64 // data_offsets: its bytes are the data section's [Start, End)
}

// DTypeSize returns the bytes per element of the safetensors dtype name,
// or 0 for a name it does not know.
func DTypeSize(dtype string) int {
	switch dtype {
	case "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3":
		return 1
	case "U16", "I16", "F16", "BF16":
		return 2
	case "U32", "I32", "F32":
		return 4
	case "U64", "I64", "F64":
		return 8
	}
	return 0
}

// ReadHeader reads and checks the header of the safetensors file r of size
// bytes (see Header), without reading its data: the tensors' bytes are
// then r's [DataStart+Start, DataStart+End). Any inconsistency is an error
// naming what is wrong.
func ReadHeader(r io.ReaderAt, size int64) (*Header, error) {
	if size < 8 {
		return nil, tooShort(size)
	}
	var pre [8]byte
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, fmt.Errorf("safetensors: reading the header length: %v", err)
	}
	hl, err := headerLength(pre[:], size)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, hl)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("safetensors: reading the header: %v", err)
	}
	return parseHeader(hdr, size, "")
}

func tooShort(size int64) error {
	return fmt.Errorf("safetensors: %d bytes, too short for the 8-byte header length (truncated file?)", size)
}

// headerLength returns the header length stored in pre, the first 8 bytes
// of a file of size bytes, after checking that the header fits in it and
// in maxHeader.
func headerLength(pre []byte, size int64) (int64, error) {
	hl := binary.LittleEndian.Uint64(pre)
	if hl > maxHeader || hl > uint64(size-8) {
		return 0, fmt.Errorf("safetensors header of %d bytes does not fit in a %d-byte file (at most %d: truncated or not a safetensors file)", hl, size, min(maxHeader, size-8))
	}
	return int64(hl), nil
}

// parseHeader parses and checks hdr, the JSON header of a safetensors file
// of size bytes (see Header). A non-empty only is the one dtype allowed:
// another is an error before anything else about its tensor.
func parseHeader(hdr []byte, size int64, only string) (*Header, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("safetensors: the header is not a JSON object: %v", err)
	}
	h := &Header{Metadata: map[string]string{}, DataStart: 8 + int64(len(hdr))}
	h.DataLen = size - h.DataStart
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.Metadata); err != nil {
				return nil, fmt.Errorf("safetensors: __metadata__ is not an object of strings: %v", err)
			}
			continue
		}
		e, err := parseEntry(name, msg, h.DataLen, only)
		if err != nil {
			return nil, err
		}
		h.Tensors = append(h.Tensors, e)
	}
	// No two tensors share bytes: the tensors then total at most the
	// file's data, which bounds what a reader allocates from them.
	slices.SortFunc(h.Tensors, func(a, b Entry) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		if a.End != b.End {
			return cmp.Compare(a.End, b.End)
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i := 1; i < len(h.Tensors); i++ {
		a, b := h.Tensors[i-1], h.Tensors[i]
		if b.Start < a.End {
			return nil, fmt.Errorf("safetensors: tensors %q and %q overlap (data_offsets [%d, %d] and [%d, %d])", a.Name, b.Name, a.Start, a.End, b.Start, b.End)
		}
	}
	return h, nil
}

// parseEntry parses and checks the header entry msg of tensor name, in a
// file with dataLen bytes of data (only: as in parseHeader).
func parseEntry(name string, msg json.RawMessage, dataLen int64, only string) (Entry, error) {
	var e struct {
		DType       string  `json:"dtype"`
		Shape       []int   `json:"shape"`
		DataOffsets []int64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(msg, &e); err != nil {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: bad header entry: %v", name, err)
	}
	if only != "" && e.DType != only {
		return Entry{}, fmt.Errorf("safetensors: tensor %q has dtype %q, only %s is supported", name, e.DType, only)
	}
	if len(e.DataOffsets) != 2 {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: data_offsets %v, want [start, end]", name, e.DataOffsets)
	}
	ent := Entry{Name: name, DType: e.DType, Shape: e.Shape, Start: e.DataOffsets[0], End: e.DataOffsets[1]}
	if ent.Start < 0 || ent.End < ent.Start || ent.End > dataLen {
		return Entry{}, fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] outside the %d bytes of data (truncated or corrupted file)", name, ent.Start, ent.End, dataLen)
	}
	// A dtype of unknown size is left to the reader, which may ignore
	// the tensor.
	if size := int64(DTypeSize(e.DType)); size > 0 {
		// A shape with a 0 dimension has no elements, whatever the
		// others; otherwise the product of the dimensions must fit the
		// data, checked before each multiplication so that it cannot
		// overflow.
		n := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return Entry{}, fmt.Errorf("safetensors: tensor %q: shape %v has a negative dimension", name, e.Shape)
			}
		}
		if slices.Contains(e.Shape, 0) {
			n = 0
		}
		for _, d := range e.Shape {
			if n == 0 {
				break
			}
			if n > dataLen/int64(d) {
				return Entry{}, fmt.Errorf("safetensors: tensor %q: shape %v does not fit in %d bytes of data", name, e.Shape, dataLen)
			}
			n *= int64(d)
		}
		if n*size != ent.End-ent.Start {
			return Entry{}, fmt.Errorf("safetensors: tensor %q: %s of shape %v needs %d bytes, data_offsets [%d, %d] give %d", name, e.DType, e.Shape, n*size, ent.Start, ent.End, ent.End-ent.Start)
		}
	}
	return ent, nil
}
