//go:build ignore

// mkhf writes a tinygpt float32 checkpoint (a GPT-2 124M-shaped model) as
// Hugging Face's GPT-2 model.safetensors (F32, GPT-2's tensor names and
// Conv1D layout, which is this package's), beside GPT-2's tokenizer files
// copied from DIR: go run mkhf.go CHECKPOINT OUTDIR TOKENIZERDIR.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

var block = map[string]string{"ln1.w": "ln_1.weight", "ln1.b": "ln_1.bias", "attn.w_qkv": "attn.c_attn.weight",
	"attn.b_qkv": "attn.c_attn.bias", "attn.w_proj": "attn.c_proj.weight", "attn.b_proj": "attn.c_proj.bias",
	"ln2.w": "ln_2.weight", "ln2.b": "ln_2.bias", "mlp.w_fc": "mlp.c_fc.weight", "mlp.b_fc": "mlp.c_fc.bias",
	"mlp.w_out": "mlp.c_proj.weight", "mlp.b_out": "mlp.c_proj.bias"}
var top = map[string]string{"wte": "wte.weight", "wpe": "wpe.weight", "ln_f.w": "ln_f.weight", "ln_f.b": "ln_f.bias"}

func hfName(ours string) string {
	if n, ok := top[ours]; ok {
		return n
	}
	rest, _ := strings.CutPrefix(ours, "h.")
	num, sub, _ := strings.Cut(rest, ".")
	return "h." + num + "." + block[sub]
}

func main() {
	ck, err := gpt.Load(os.Args[1])
	if err != nil {
		panic(err)
	}
	m := ck.Model
	var ts []safetensors.Raw
	for _, x := range m.Config.Tensors() {
		v := m.Params[x.Offset : x.Offset+x.Size()]
		ts = append(ts, safetensors.Raw{Name: hfName(x.Name), DType: "F32", Shape: x.Shape, Data: unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))})
	}
	b, err := safetensors.EncodeRaw(ts, map[string]string{"format": "pt"})
	if err != nil {
		panic(err)
	}
	os.MkdirAll(os.Args[2], 0o755)
	if err := os.WriteFile(filepath.Join(os.Args[2], gpt.HFFile), b, 0o644); err != nil {
		panic(err)
	}
	for _, f := range []string{"encoder.json", "vocab.bpe"} {
		d, err := os.ReadFile(filepath.Join(os.Args[3], f))
		if err != nil {
			panic(err)
		}
		os.WriteFile(filepath.Join(os.Args[2], f), d, 0o644)
	}
	fmt.Println("wrote", os.Args[2])
}
