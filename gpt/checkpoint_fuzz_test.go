package gpt

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// fixChecksum recomputes the whole-file checksum of a checkpoint's bytes
// in place when its header has one, so that the fuzzer reaches the checks
// behind the checksum.
func fixChecksum(b []byte) {
	if len(b) < 8 {
		return
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > uint64(len(b)-8) {
		return
	}
	field := []byte(`"crc32c":"`)
	i := bytes.Index(b[8:8+hl], field)
	if i < 0 || 8+i+len(field)+8 > len(b) {
		return
	}
	at := 8 + i + len(field)
	copy(b[at:at+8], "00000000")
	sum := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	hex.Encode(b[at:at+8], binary.BigEndian.AppendUint32(nil, sum))
}

// FuzzDecodeCheckpoint: arbitrary bytes, with or without a recomputed
// checksum, never panic and never allocate a model of a size the file does
// not back; what loads is consistent.
func FuzzDecodeCheckpoint(f *testing.F) {
	good := tinyCheckpoint(f, map[string]string{"tinygpt.run": `{"threads":1}`})
	f.Add(good, false)
	for _, w := range []Weights{WeightsBF16, WeightsInt8} {
		m := weightsModel(f, weightsConfigs[2], w)
		p := filepath.Join(f.TempDir(), w.String())
		if err := m.SaveWeights(p, nil, 0, nil); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Add(good[:len(good)/2], true)
	f.Add(good[:100], false)
	f.Add([]byte("\x08\x00\x00\x00\x00\x00\x00\x00{}      "), true)
	f.Fuzz(func(t *testing.T, b []byte, resum bool) {
		if resum {
			fixChecksum(b)
		}
		ck, err := decodeCheckpoint(b)
		if err != nil {
			if ck != nil {
				t.Fatal("checkpoint and error")
			}
			return
		}
		cfg := ck.Model.Config
		if err := cfg.CheckLimits(); err != nil {
			t.Fatalf("loaded a config outside the limits: %v", err)
		}
		if f := ck.Model.Weights(); f != WeightsF32 {
			// A low-bit model holds no more than its file's tensors
			// (with their padding, which the file holds too).
			if need := InferenceBytes(cfg, f); need > 2*int64(len(b)) || ck.Opt != nil {
				t.Fatalf("%v model of %d bytes from %d bytes, optimizer %v", f, need, len(b), ck.Opt != nil)
			}
		} else if n := cfg.NumParams(); len(ck.Model.Params) != n || 4*n > len(b) {
			t.Fatalf("%d parameters (config %d) from %d bytes", len(ck.Model.Params), n, len(b))
		}
		if ck.Vocab != nil && ck.Vocab.Size() != cfg.Vocab {
			t.Fatalf("vocabulary of %d for %d tokens", ck.Vocab.Size(), cfg.Vocab)
		}
		if ck.Opt != nil && (len(ck.Opt.M) != len(ck.Model.Params) || ck.Train.BatchSize < 1 || ck.Train.BatchSize > MaxBatch) {
			t.Fatalf("optimizer of %d moments, batch size %d", len(ck.Opt.M), ck.Train.BatchSize)
		}
	})
}
