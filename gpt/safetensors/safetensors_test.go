package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"testing"
)

func sample() []Tensor {
	return []Tensor{
		{Name: "w", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, float32(math.Inf(-1))}},
		{Name: "b", Shape: []int{3}, Data: []float32{-0.5, 0, 7e-30}},
		{Name: "scalar", Shape: []int{}, Data: []float32{42}},
		{Name: "empty", Shape: []int{0, 4}, Data: []float32{}},
	}
}

func TestRoundTrip(t *testing.T) {
	b, err := Encode(sample(), map[string]string{"step": "12", "vocab": "ab\"c\n"})
	if err != nil {
		t.Fatal(err)
	}
	if hl := binary.LittleEndian.Uint64(b); (8+hl)%8 != 0 {
		t.Fatalf("data starts at %d, not 8-byte aligned", 8+hl)
	}
	got, meta, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if meta["step"] != "12" || meta["vocab"] != "ab\"c\n" || meta[ChecksumKey] == "" {
		t.Fatalf("metadata %v", meta)
	}
	want := sample()
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	for i := range want { // Decode orders by offset = encoding order
		g, w := got[i], want[i]
		if g.Name != w.Name || fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) || fmt.Sprint(g.Data) != fmt.Sprint(w.Data) {
			t.Fatalf("tensor %d: got %+v want %+v", i, g, w)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good, err := Encode(sample(), nil)
	if err != nil {
		t.Fatal(err)
	}

	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x10
		return b
	}
	header := func(h string) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, uint64(len(h)))
		return append(b, h...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"truncated in header", good[:20], "does not fit"},
		{"truncated in data", good[:len(good)-3], "truncated"},
		{"extra bytes", append(append([]byte(nil), good...), 0, 0, 0, 0), "checksum"},
		{"flipped data bit", flip(len(good) - 5), "checksum"},
		{"flipped header byte", flip(8), "checksum"},
		{"renamed metadata", flip(8 + 2), "checksum"},
		{"no checksum", append(header(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0), "no checksum"},
		{"legacy data checksum wrong", append(header(`{"__metadata__":{"data_crc32c":"1"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0), "data checksum"},
		{"checksum twice", header(`{"__metadata__":{"crc32c":"00000000","crc32c":"00000000"}}`), "more than once"},
		{"checksum not hex", header(`{"__metadata__":{"crc32c":"0000000g"}}`), "hexadecimal"},
		{"checksum with a space", header(`{"__metadata__":{"crc32c": "00000000"}}`), "form Encode writes"},
		{"huge header length", func() []byte { b := append([]byte(nil), good...); binary.LittleEndian.PutUint64(b, 1<<40); return b }(), "does not fit"},
		{"dtype", header(`{"x":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}  `), "only F32"},
		{"offsets", append(header(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`), 0, 0, 0, 0), "data_offsets"},
		{"overlap", append(header(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0), "data_offsets"},
	} {
		_, _, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

// TestEveryBitCovered flips each bit of an encoded file in turn: every
// one must be an error (CRC-32C detects all single-bit errors, and the
// checksum covers the header length, the header and the data).
func TestEveryBitCovered(t *testing.T) {
	good, err := Encode(sample(), map[string]string{"config": `{"width":64}`, "step": "12", "vocab": "ab\"c\n"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), good...)
			b[i] ^= 1 << bit
			if _, meta, err := Decode(b); err == nil {
				t.Fatalf("byte %d bit %d flipped: decoded without error (metadata %v)", i, bit, meta)
			}
			checkSplit(t, fmt.Sprintf("byte %d bit %d flipped", i, bit), b)
		}
	}
	checkSplit(t, "unchanged", good)
	for _, n := range []int{0, 7, 8, 20, len(good) / 2, len(good) - 1} {
		checkSplit(t, fmt.Sprintf("truncated to %d bytes", n), good[:n])
	}
}

// checkSplit checks that VerifyChecksum and then VerifyHeader return
// Verify's error (the checksum's first), or none when Verify has none.
func checkSplit(t *testing.T, what string, b []byte) {
	t.Helper()
	_, want := Verify(b)
	got := VerifyChecksum(b)
	if got == nil {
		_, got = VerifyHeader(b)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: VerifyChecksum then VerifyHeader: %v; Verify: %v", what, got, want)
	}
}

// TestLegacyDataChecksum: a file with only the old data checksum loads,
// and HeaderVerified says its header was not covered.
func TestLegacyDataChecksum(t *testing.T) {
	data := []byte{0, 0, 128, 63} // 1.0
	h := fmt.Sprintf(`{"__metadata__":{"data_crc32c":"%d","step":"3"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, crc32.Checksum(data, castagnoli))
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	b = append(append(b, h...), data...)
	ts, meta, err := Decode(b)
	if err != nil || len(ts) != 1 || ts[0].Data[0] != 1 || meta["step"] != "3" {
		t.Fatalf("legacy file: %v %v %v", ts, meta, err)
	}
	if HeaderVerified(meta) {
		t.Error("HeaderVerified is true for a file with only a data checksum")
	}
	checkSplit(t, "legacy file", b)
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] ^= 1
	if err := VerifyChecksum(bad); err != nil {
		t.Errorf("legacy file, data changed: VerifyChecksum: %v, want nil (its data checksum is VerifyHeader's)", err)
	}
	if _, err := VerifyHeader(bad); err == nil {
		t.Error("legacy file, data changed: VerifyHeader: no error")
	}
	checkSplit(t, "legacy file, data changed", bad)
	good, _ := Encode(ts, meta)
	if _, meta, err := Decode(good); err != nil || !HeaderVerified(meta) || meta[DataChecksumKey] != "" {
		t.Errorf("re-encoded: %v %v", meta, err)
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		ts   []Tensor
		want string
	}{
		{"shape", []Tensor{{Name: "x", Shape: []int{2, 2}, Data: []float32{1}}}, "4 elements"},
		{"dup", []Tensor{{Name: "x", Shape: []int{1}, Data: []float32{1}}, {Name: "x", Shape: []int{1}, Data: []float32{1}}}, "repeated"},
		{"reserved", []Tensor{{Name: "__metadata__", Shape: []int{1}, Data: []float32{1}}}, "bad or repeated"},
		{"negative", []Tensor{{Name: "x", Shape: []int{2, -1}}}, `tensor "x" has a negative dimension in shape [2 -1]`},
		// Element counts that overflow int to 0 or wrap around.
		{"overflow to 0", []Tensor{{Name: "x", Shape: []int{pow2(32), pow2(32)}}}, `tensor "x": shape [4294967296 4294967296] has more than the 2147483647 elements a reader accepts`},
		{"overflow to 1", []Tensor{{Name: "y", Shape: []int{pow2(32) + 1, pow2(32) - 1, pow2(32) + 1, pow2(32) - 1}, Data: []float32{1}}}, `tensor "y": shape [4294967297 4294967295 4294967297 4294967295] has more than`},
		{"overflow hidden by 0", []Tensor{{Name: "x", Shape: []int{pow2(62), pow2(62), 0}}}, "more than the 2147483647 elements"},
		{"above the reader's limit", []Tensor{{Name: "x", Shape: []int{1 << 16, 1 << 15}}}, "more than the 2147483647 elements"},
	} {
		if _, err := Encode(c.ts, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestEncodeRejectsLargeHeader: a header Decode would refuse (metadata
// above maxHeader) is not encoded.
func TestEncodeRejectsLargeHeader(t *testing.T) {
	ts := []Tensor{{Name: "x", Shape: []int{1}, Data: []float32{1}}}
	_, err := Encode(ts, map[string]string{"notes": strings.Repeat("n", maxHeader)})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the limit of %d a reader accepts", maxHeader)) {
		t.Errorf("err = %v, want the header limit", err)
	}
}

func ExampleEncode() {
	b, _ := Encode([]Tensor{{Name: "bias", Shape: []int{2}, Data: []float32{0.5, -1}}}, map[string]string{"step": "3"})
	ts, meta, err := Decode(b)
	fmt.Println(ts[0].Name, ts[0].Shape, ts[0].Data, meta["step"], err)
	// Output: bias [2] [0.5 -1] 3 <nil>
}

// file returns a safetensors file of header h (no checksum) and n data
// bytes.
func file(h string, n int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), make([]byte, n)...)
}

// failingReader fails every read.
type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("device on fire") }

func TestReadHeaderRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"7 bytes", make([]byte, 7), "too short"},
		{"header length past the end", file(`{}`, 0)[:9], "safetensors header of 2 bytes does not fit in a 9-byte file"},
		{"huge header length", binary.LittleEndian.AppendUint64(nil, 1<<62), "does not fit"},
		{"not JSON", file(`{x}`, 0), "not a JSON object"},
		{"JSON array", file(`[1]`, 0), "not a JSON object"},
		{"metadata not strings", file(`{"__metadata__":{"a":1}}`, 0), "__metadata__ is not an object of strings"},
		{"entry not an object", file(`{"x":3}`, 4), `tensor "x": bad header entry`},
		{"shape not numbers", file(`{"x":{"dtype":"F32","shape":["a"],"data_offsets":[0,4]}}`, 4), `tensor "x": bad header entry`},
		{"one offset", file(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[4]}}`, 4), "want [start, end]"},
		{"three offsets", file(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, 8), "want [start, end]"},
		{"no offsets", file(`{"x":{"dtype":"F32","shape":[1]}}`, 4), "want [start, end]"},
		{"end past the data", file(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), `tensor "x": data_offsets [0, 8] outside the 4 bytes of data`},
		{"negative start", file(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, 4), "outside the 4 bytes"},
		{"end before start", file(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[3,2]}}`, 4), "outside the 4 bytes"},
		{"negative dimension", file(`{"x":{"dtype":"F32","shape":[-1,-4],"data_offsets":[0,4]}}`, 4), "shape [-1 -4] has a negative dimension"},
		{"negative and zero", file(`{"x":{"dtype":"F32","shape":[0,-4],"data_offsets":[0,0]}}`, 4), "shape [0 -4] has a negative dimension"},
		{"shape overflowing to 0", file(`{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0), "shape [4294967296 4294967296] does not fit in 0 bytes"},
		{"shape overflowing to 1", file(`{"x":{"dtype":"U8","shape":[4294967297,4294967295,4294967297,4294967295],"data_offsets":[0,1]}}`, 1), "does not fit in 1 bytes"},
		{"huge shape", file(`{"x":{"dtype":"I8","shape":[65536,65536,65536,65536],"data_offsets":[0,0]}}`, 4), "does not fit in 4 bytes"},
		{"bytes for the shape", file(`{"x":{"dtype":"BF16","shape":[3],"data_offsets":[0,4]}}`, 4), "BF16 of shape [3] needs 6 bytes, data_offsets [0, 4] give 4"},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}}`, 8), `tensors "a" and "b" overlap`},
		{"empty tensor inside another", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}}`, 8), "overlap"},
	} {
		h, err := ReadHeader(bytes.NewReader(c.b), int64(len(c.b)))
		if err == nil || h != nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "safetensors") {
			t.Errorf("%s: ReadHeader = %+v, %v; want nil and a safetensors error containing %q", c.name, h, err, c.want)
		}
	}
	if _, err := ReadHeader(failingReader{}, 100); err == nil || !strings.Contains(err.Error(), "device on fire") {
		t.Errorf("failing reader: err = %v, want the read error", err)
	}
}

// TestReadHeader reads the header of an encoded file and of files with
// what only ReadHeader accepts: other dtypes, gaps between tensors, no
// checksum.
func TestReadHeader(t *testing.T) {
	enc, err := Encode(sample(), map[string]string{"step": "12"})
	if err != nil {
		t.Fatal(err)
	}
	hl := int64(binary.LittleEndian.Uint64(enc))
	for _, c := range []struct {
		name string
		b    []byte
		want []Entry
		meta map[string]string
	}{
		{"encoded", enc, []Entry{
			{"w", "F32", []int{2, 3}, 0, 24}, {"b", "F32", []int{3}, 24, 36},
			{"scalar", "F32", []int{}, 36, 40}, {"empty", "F32", []int{0, 4}, 40, 40},
		}, nil},
		{"mixed dtypes, a gap, an unknown dtype", file(`{"__metadata__":{"format":"pt"},"m":{"dtype":"F16","shape":[2,2],"data_offsets":[2,10]},"odd":{"dtype":"Q4","shape":[7],"data_offsets":[10,13]},"i":{"dtype":"I64","shape":[],"data_offsets":[16,24]}}`, 24), []Entry{
			{"m", "F16", []int{2, 2}, 2, 10}, {"odd", "Q4", []int{7}, 10, 13}, {"i", "I64", []int{}, 16, 24},
		}, map[string]string{"format": "pt"}},
		{"empty tensors at one offset, ordered by name", file(`{"z":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}`, 0), []Entry{
			{"a", "F32", []int{0}, 0, 0}, {"z", "F32", []int{0}, 0, 0},
		}, map[string]string{}},
		{"no tensors", file(`{}`, 0), nil, map[string]string{}},
	} {
		h, err := ReadHeader(bytes.NewReader(c.b), int64(len(c.b)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(h.Tensors) != fmt.Sprint(c.want) {
			t.Errorf("%s: tensors %v, want %v", c.name, h.Tensors, c.want)
		}
		hlen := int64(binary.LittleEndian.Uint64(c.b))
		if h.DataStart != 8+hlen || h.DataLen != int64(len(c.b))-8-hlen {
			t.Errorf("%s: DataStart %d, DataLen %d; want %d, %d", c.name, h.DataStart, h.DataLen, 8+hlen, int64(len(c.b))-8-hlen)
		}
		if c.meta != nil && fmt.Sprint(h.Metadata) != fmt.Sprint(c.meta) {
			t.Errorf("%s: metadata %v, want %v", c.name, h.Metadata, c.meta)
		}
		if h.Metadata == nil {
			t.Errorf("%s: nil metadata", c.name)
		}
	}
	// The encoded tensors' bytes are where the header says.
	h, _ := ReadHeader(bytes.NewReader(enc), int64(len(enc)))
	if h.DataStart != 8+hl {
		t.Fatalf("DataStart %d, want %d", h.DataStart, 8+hl)
	}
	for i, e := range h.Tensors {
		for j, v := range sample()[i].Data {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(enc[h.DataStart+e.Start+4*int64(j):])); got != v {
				t.Fatalf("tensor %s element %d: %g at its offset, want %g", e.Name, j, got, v)
			}
		}
	}
}

func TestDTypeSize(t *testing.T) {
	for _, c := range []struct {
		dtype string
		size  int
	}{{"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F64", 8}, {"I64", 8}, {"U8", 1}, {"BOOL", 1}, {"I32", 4}, {"f32", 0}, {"", 0}, {"Q4", 0}} {
		if got := DTypeSize(c.dtype); got != c.size {
			t.Errorf("DTypeSize(%q) = %d, want %d", c.dtype, got, c.size)
		}
	}
}

// FuzzReadHeader: ReadHeader never panics, what it accepts satisfies
// Header's contract, and every file Decode accepts has a header
// ReadHeader accepts with the same tensors.
func FuzzReadHeader(f *testing.F) {
	good, _ := Encode(sample(), map[string]string{"step": "1"})
	f.Add(good)
	f.Add(file(`{"m":{"dtype":"F16","shape":[2,2],"data_offsets":[2,10]},"odd":{"dtype":"Q4","shape":[7],"data_offsets":[10,13]}}`, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
		ts, _, derr := Decode(b)
		if err != nil {
			if derr == nil {
				t.Fatalf("Decode accepts a file whose header ReadHeader refuses: %v", err)
			}
			return
		}
		end := int64(0)
		for _, e := range h.Tensors {
			if e.Start < end || e.End < e.Start || e.End > h.DataLen {
				t.Fatalf("tensor %q at [%d, %d] after %d in %d data bytes", e.Name, e.Start, e.End, end, h.DataLen)
			}
			end = e.End
			if s := int64(DTypeSize(e.DType)); s > 0 && int64(numel(e.Shape))*s != e.End-e.Start {
				t.Fatalf("tensor %q: %s %v in %d bytes", e.Name, e.DType, e.Shape, e.End-e.Start)
			}
		}
		if h.DataStart+h.DataLen != int64(len(b)) {
			t.Fatalf("DataStart %d + DataLen %d != %d bytes", h.DataStart, h.DataLen, len(b))
		}
		if derr == nil {
			if len(ts) != len(h.Tensors) {
				t.Fatalf("Decode: %d tensors, ReadHeader %d", len(ts), len(h.Tensors))
			}
			for i, x := range ts {
				if e := h.Tensors[i]; x.Name != e.Name || fmt.Sprint(x.Shape) != fmt.Sprint(e.Shape) {
					t.Fatalf("tensor %d: Decode %s %v, ReadHeader %s %v", i, x.Name, x.Shape, e.Name, e.Shape)
				}
			}
		}
	})
}

// TestZeroElementShapes: a shape with a 0 dimension has no elements
// whatever its other dimensions, for the reader; Encode writes it when
// the product of its other dimensions is within a reader's limit, and the
// file decodes to the same tensor.
func TestZeroElementShapes(t *testing.T) {
	f := file(`{"x":{"dtype":"F32","shape":[4294967296,0,4294967296],"data_offsets":[0,0]}}`, 0)
	h, err := ReadHeader(bytes.NewReader(f), int64(len(f)))
	if err != nil || len(h.Tensors) != 1 || h.Tensors[0].End != 0 {
		t.Fatalf("ReadHeader = %+v, %v; want one empty tensor", h, err)
	}
	b, err := Encode([]Tensor{{Name: "x", Shape: []int{3, 0, 1 << 20}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, _, err := Decode(b)
	if err != nil || len(ts) != 1 || !slices.Equal(ts[0].Shape, []int{3, 0, 1 << 20}) || len(ts[0].Data) != 0 {
		t.Fatalf("Decode = %+v, %v; want the empty 3×0×1048576 tensor", ts, err)
	}
}

// numel is the product of shape's dimensions, 0 when one of them is 0
// (for the shapes ReadHeader accepts, where it cannot overflow
// otherwise).
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// pow2 returns 2ⁿ as an int, computed at run time so that sizes beyond a
// 32-bit int still compile there (the cases that use them assume a
// 64-bit int; on 32 bits they come out 0).
func pow2(n int) int { return 1 << n }
