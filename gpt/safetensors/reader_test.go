package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

// readAll reads the file b with a Reader, one tensor of every three into
// a Dst of its size, one to a Fn, one to no sink, and returns Verify's
// error or what it read: the bytes each tensor's sink got.
func readAll(b []byte) (map[string][]byte, error) {
	rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	got := map[string][]byte{}
	sinks := map[string]Sink{}
	for i, e := range rd.H.Tensors {
		switch i % 3 {
		case 0:
			got[e.Name] = make([]byte, e.End-e.Start)
			sinks[e.Name] = Sink{Dst: got[e.Name]}
		case 1:
			got[e.Name] = []byte{}
			sinks[e.Name] = Sink{Fn: func(off int64, p []byte) error {
				if off != int64(len(got[e.Name])) {
					return fmt.Errorf("piece at %d after %d bytes", off, len(got[e.Name]))
				}
				got[e.Name] = append(got[e.Name], p...)
				return nil
			}}
		}
	}
	if err := rd.ReadData(sinks); err != nil {
		return nil, err
	}
	return got, nil
}

// checkReader checks that reading b with a Reader fails exactly as Verify
// does, and otherwise gives each sink its tensor's bytes.
func checkReader(t *testing.T, what string, b []byte) {
	t.Helper()
	h, want := Verify(b)
	got, err := readAll(b)
	if fmt.Sprint(err) != fmt.Sprint(want) {
		t.Fatalf("%s: Reader: %v; Verify: %v", what, err, want)
	}
	if err != nil {
		return
	}
	for name, g := range got {
		for _, e := range h.Tensors {
			if e.Name == name && !bytes.Equal(g, b[h.DataStart+e.Start:h.DataStart+e.End]) {
				t.Fatalf("%s: tensor %q: the sink got other bytes than the file's", what, name)
			}
		}
	}
}

// bigFile is a file whose tensors span several of the Reader's pieces.
func bigFile(t *testing.T) []byte {
	t.Helper()
	var ts []Raw
	for i, n := range []int{3*ChunkSize + 12, 1 << 10, ChunkSize, 2*ChunkSize + 4, 4} {
		d := make([]byte, n)
		for j := range d {
			d[j] = byte(j*7 + i)
		}
		ts = append(ts, Raw{Name: fmt.Sprintf("t%d", i), DType: "U8", Shape: []int{n}, Data: d})
	}
	b, err := EncodeRaw(ts, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReaderAsVerify: the Reader's verdict is Verify's, error for error,
// on every bit of a small file flipped, on a file of many pieces with
// bits flipped at the pieces' edges, on truncated and extended files and
// on every case TestDecodeRejects refuses; what it reads is the file's.
func TestReaderAsVerify(t *testing.T) {
	small, err := Encode(sample(), map[string]string{"config": `{"width":64}`, "step": "12"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range small {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), small...)
			b[i] ^= 1 << bit
			checkReader(t, fmt.Sprintf("small, byte %d bit %d flipped", i, bit), b)
		}
	}
	big := bigFile(t)
	checkReader(t, "big", big)
	hl := int(binary.LittleEndian.Uint64(big))
	for _, i := range []int{0, 8, 8 + hl - 1, 8 + hl, 8 + hl + ChunkSize - 1, 8 + hl + ChunkSize, 8 + hl + 3*ChunkSize + 11, len(big) - 1} {
		b := append([]byte(nil), big...)
		b[i] ^= 4
		checkReader(t, fmt.Sprintf("big, byte %d flipped", i), b)
	}
	for _, n := range []int{0, 7, 8, 20, 8 + hl, 8 + hl + ChunkSize, len(big) - 1} {
		checkReader(t, fmt.Sprintf("big, truncated to %d bytes", n), big[:n])
	}
	checkReader(t, "big, extended", append(append([]byte(nil), big...), 0))
	header := func(h string) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(b, h...)
	}
	data := []byte{0, 0, 128, 63}
	legacy := header(fmt.Sprintf(`{"__metadata__":{"data_crc32c":"%d"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, crc32.Checksum(data, castagnoli)))
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"no checksum", append(header(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0)},
		{"legacy", append(append([]byte(nil), legacy...), data...)},
		{"legacy data changed", append(append([]byte(nil), legacy...), 0, 0, 128, 64)},
		{"legacy data checksum wrong", append(header(`{"__metadata__":{"data_crc32c":"1"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0)},
		{"legacy data checksum not a number", append(header(`{"__metadata__":{"data_crc32c":"x"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0)},
		{"checksum twice", header(`{"__metadata__":{"crc32c":"00000000","crc32c":"00000000"}}`)},
		{"checksum not hex", header(`{"__metadata__":{"crc32c":"0000000g"}}`)},
		{"checksum with a space", header(`{"__metadata__":{"crc32c": "00000000"}}`)},
		{"unknown dtype", append(header(`{"x":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}}`), 0, 0, 0, 0)},
		{"offsets", append(header(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`), 0, 0, 0, 0)},
		{"gap", append(header(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`), make([]byte, 8)...)},
	} {
		checkReader(t, c.name, c.b)
	}
}

// shortReader is a file that ends at n bytes although its size was given
// as more (truncated while it is read).
type shortReader struct {
	b []byte
	n int64
}

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(r.b[:r.n]).ReadAt(p, off)
}

// TestReaderErrors: a file that ends while it is read is ErrShortRead; a
// sink's error is the error of a file whose checksum matches and the
// checksum's error that of one whose does not; the sink gets no bytes
// after its error; ReadData twice is an error.
func TestReaderErrors(t *testing.T) {
	big := bigFile(t)
	hl := int64(binary.LittleEndian.Uint64(big))
	for _, n := range []int64{4, 8 + hl - 1, 8 + hl + 1, 8 + hl + ChunkSize + 3, int64(len(big)) - 1} {
		rd, err := NewReader(shortReader{big, n}, int64(len(big)))
		if err == nil {
			err = rd.ReadData(nil)
		}
		if !errors.Is(err, ErrShortRead) {
			t.Errorf("a file that ends at %d of its %d bytes: %v, want ErrShortRead", n, len(big), err)
		}
	}
	damaged := append([]byte(nil), big...)
	damaged[len(damaged)-1] ^= 1
	refuse := errors.New("refused")
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"intact", big, "refused"},
		{"damaged", damaged, "checksum"},
	} {
		rd, err := NewReader(bytes.NewReader(c.b), int64(len(c.b)))
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		err = rd.ReadData(map[string]Sink{"t0": {Fn: func(off int64, p []byte) error {
			calls++
			if len(p) != ChunkSize {
				return fmt.Errorf("a first piece of %d bytes, want %d", len(p), ChunkSize)
			}
			return refuse
		}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: a sink refusing the first piece: %v, want %q", c.name, err, c.want)
		}
		if calls != 1 {
			t.Errorf("%s: the sink was called %d times, want once", c.name, calls)
		}
		if err := rd.ReadData(nil); err == nil {
			t.Errorf("%s: ReadData twice: no error", c.name)
		}
	}
	for _, size := range []int64{0, 7} {
		if _, err := NewReader(bytes.NewReader(big), size); err == nil || !strings.Contains(err.Error(), "too short") {
			t.Errorf("size %d: %v, want 'too short'", size, err)
		}
	}
	if _, err := NewReader(failingReader{}, 100); err == nil || !strings.Contains(err.Error(), "device on fire") {
		t.Errorf("a failing reader: %v", err)
	}
}

// TestReaderFinish: Finish without ReadData verifies the whole file (a
// caller that refuses a file after its header learns whether it was
// damaged), and ReadData after Finish is an error.
func TestReaderFinish(t *testing.T) {
	big := bigFile(t)
	for _, c := range []struct {
		name string
		flip int
		want string
	}{
		{"intact", -1, ""},
		{"last byte flipped", len(big) - 1, "checksum"},
		{"middle byte flipped", len(big) / 2, "checksum"},
	} {
		b := append([]byte(nil), big...)
		if c.flip >= 0 {
			b[c.flip] ^= 0x80
		}
		rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		err = rd.Finish()
		if fmt.Sprint(err) != fmt.Sprint(func() error { _, e := Verify(b); return e }()) || (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Finish: %v, want %q", c.name, err, c.want)
		}
		if err2 := rd.Finish(); fmt.Sprint(err2) != fmt.Sprint(err) {
			t.Errorf("%s: Finish again: %v, want %v", c.name, err2, err)
		}
		if err := rd.ReadData(nil); err == nil {
			t.Errorf("%s: ReadData after Finish: no error", c.name)
		}
	}
}
