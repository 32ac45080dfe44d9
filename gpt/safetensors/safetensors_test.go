package safetensors

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
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
		}
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
