package gpt

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

// BenchmarkLoad times loading a GPT-2 small-shaped model (random weights)
// from a warm page cache, whole: GPT-2's Hugging Face safetensors (F32)
// as float32 and converted on load to bf16 and int8 (WithLoadWeights),
// and the checkpoints SaveWeights writes of it in each format (Load, no
// conversion). The files are written to a temporary directory first
// (about 1.3 GB) and read once before the timing. Skipped under -short.
func BenchmarkLoad(b *testing.B) {
	skipGPT2(b)
	m := sharedGPT2(b)
	dir, err := os.MkdirTemp("", "simdgpt-load-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	hf := filepath.Join(dir, HFFile)
	var ts []safetensors.Raw
	for _, x := range m.Config.Tensors() {
		ts = append(ts, safetensors.Raw{Name: hfFileName(x.Name), DType: "F32", Shape: x.Shape, Data: f32Bytes(m.Params[x.Offset : x.Offset+x.Size()])})
	}
	file, err := safetensors.EncodeRaw(ts, map[string]string{"format": "pt"})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(hf, file, 0o644); err != nil {
		b.Fatal(err)
	}
	file = nil
	ck := map[Weights]string{}
	for _, f := range []Weights{WeightsF32, WeightsBF16, WeightsInt8} {
		low, err := m.WithWeights(f)
		if err != nil {
			b.Fatal(err)
		}
		ck[f] = filepath.Join(dir, f.String()+".safetensors")
		if err := low.SaveWeights(ck[f], nil, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
	debug.FreeOSMemory()
	for _, c := range []struct {
		name string
		path string
		load func() (*Model, error)
	}{
		{"hf-f32", hf, func() (*Model, error) { return LoadGPT2(hf) }},
		{"hf-bf16", hf, func() (*Model, error) { return LoadGPT2(hf, WithLoadWeights(WeightsBF16)) }},
		{"hf-int8", hf, func() (*Model, error) { return LoadGPT2(hf, WithLoadWeights(WeightsInt8)) }},
		{"checkpoint-f32", ck[WeightsF32], func() (*Model, error) { ck, err := Load(ck[WeightsF32]); return ckModel(ck), err }},
		{"checkpoint-bf16", ck[WeightsBF16], func() (*Model, error) { ck, err := Load(ck[WeightsBF16]); return ckModel(ck), err }},
		{"checkpoint-int8", ck[WeightsInt8], func() (*Model, error) { ck, err := Load(ck[WeightsInt8]); return ckModel(ck), err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			st, err := os.Stat(c.path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := os.ReadFile(c.path); err != nil { // the page cache, warm
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			for b.Loop() {
				m, err := c.load()
				if err != nil || m == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ckModel is ck's model, nil for no checkpoint.
func ckModel(ck *Checkpoint) *Model {
	if ck == nil {
		return nil
	}
	return ck.Model
}
