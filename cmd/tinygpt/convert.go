package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/internal/atomicfile"
)

func runConvert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "checkpoint `dir`ectory or file to convert: written by tinygpt train, or GPT-2 weights (Hugging Face's model.safetensors or its directory, llm.c's gpt2_*.bin)")
	tokDir := fs.String("tokenizer_dir", "", "`dir`ectory of the BPE tokenizer to embed; default: the checkpoint's own, or for GPT-2 weights the files beside them (none: a model of token ids)")
	weights := fs.String("weights", "", "format to write the blocks' matrices and the LM head in: bf16 or int8 (or f32: the float32 weights without optimizer state)")
	out := fs.String("out", "", "`dir`ectory to write checkpoint.safetensors in (created if missing); a checkpoint already there is not replaced")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt convert --checkpoint DIR|FILE --weights bf16|int8|f32 --out DIR [--tokenizer_dir DIR]

Writes OUT/checkpoint.safetensors: the model's weights for inference, its
matrices (the blocks' four and the LM head) converted once to --weights
as sample --weights and eval --weights convert them on every start, the
embeddings, LayerNorms and biases float32, with the tokenizer or
vocabulary, and no optimizer state (it does not train or resume).
sample and eval read it with no conversion, its format from the file:
the same tokens and losses as --weights on the source. The file is
written atomically, and never over an existing one (the source included).

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return st
	}
	return finish(stderr, "convert", convert(*ckpt, *tokDir, *weights, *out, stdout, stderr))
}

func convert(ckpt, tokDir, weights, out string, stdout, stderr io.Writer) error {
	switch {
	case ckpt == "":
		return usageError{"--checkpoint is missing: name the checkpoint or GPT-2 weights to convert"}
	case weights == "":
		return usageError{"--weights is missing: bf16, int8 or f32"}
	}
	wf, err := parseWeights(weights)
	if err != nil {
		return err
	}
	if out == "" {
		return usageError{"--out is missing: name the directory to write the converted checkpoint in"}
	}
	src, err := modelFile(ckpt)
	if err != nil {
		return err
	}
	dst := filepath.Join(out, gpt.CheckpointFile)
	if st, err := os.Stat(dst); err == nil {
		if ss, err := os.Stat(src); err == nil && os.SameFile(st, ss) {
			return usageError{fmt.Sprintf("--out %s: %s is the checkpoint being converted; choose another directory", out, dst)}
		}
		return usageError{fmt.Sprintf("--out %s: %s exists; remove it or choose another directory", out, dst)}
	} else if exists(dst) {
		// A dangling link, or a file Stat may not follow.
		return usageError{fmt.Sprintf("--out %s: %s exists; remove it or choose another directory", out, dst)}
	}
	if err := atomicfile.CheckDir(out); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	lm, err := loadModel(ckpt, tokDir, "convert", wf, stderr)
	if err != nil {
		return err
	}
	extra := map[string]string{}
	var vocab *data.Vocab
	step := 0
	if lm.ck != nil {
		for k, v := range lm.ck.Extra {
			extra[k] = v
		}
		vocab, step = lm.ck.Vocab, lm.ck.Step
	}
	if lm.tok != nil && lm.tok.meta != nil {
		// The tokenizer found (or given by --tokenizer_dir) replaces the
		// source's.
		for _, k := range []string{metaTokenizer, metaEncoderJSON, metaVocabBPE, metaLlmc} {
			delete(extra, k)
		}
		for k, v := range lm.tok.meta {
			extra[k] = v
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := lm.m.SaveWeights(dst, vocab, step, extra); err != nil {
		return err
	}
	st, err := os.Stat(dst)
	if err != nil {
		return err
	}
	tok := "token ids"
	if lm.tok != nil {
		tok = lm.tok.describe()
	}
	fmt.Fprintf(stdout, "wrote %s: %s with %v weights (%s), %s\n", dst, lm.describe(), lm.m.Weights(), tok, gpt.FormatBytes(st.Size()))
	return nil
}
