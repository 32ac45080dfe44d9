package main

import (
	encbin "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/internal/readfile"
)

// model is a model read by sample, eval or train --init: one of our
// checkpoints, or GPT-2 weights (Hugging Face's model.safetensors or
// llm.c's gpt2_*.bin), with its tokenizer.
type model struct {
	path  string // the file read
	m     *gpt.Model
	ck    *gpt.Checkpoint // our checkpoint, else nil
	tok   *tokenizer      // nil: a model of token ids
	isGPT bool            // GPT-2 weights
	// noTok, for GPT-2 weights without a tokenizer (tok nil), is the
	// directory where none was found: token files need none, text and
	// printed tokens do.
	noTok string
}

// needTokenizer is the error of a command that must encode text or print
// tokens (what) with a model loaded without its tokenizer.
func (lm *model) needTokenizer(what string) error {
	return fmt.Errorf("no tokenizer for %s: %s needs one, and %s holds neither encoder.json and vocab.bpe, nor vocab.json and merges.txt, nor %s; put them there or give their directory with --tokenizer_dir (token files need none)",
		lm.path, what, lm.noTok, llmcTokenizer)
}

// encoding returns how data files are tokenized for lm (see encoding):
// without a tokenizer, token files are read and text is refused with
// needTokenizer's error.
func (lm *model) encoding() (data.Encoding, error) {
	if lm.tok == nil && lm.noTok != "" {
		return data.Encoding{Name: fmt.Sprintf("GPT-2's vocabulary of %d token ids", lm.m.Config.Vocab), Size: lm.m.Config.Vocab, Encode: func(string) ([]uint16, error) {
			return nil, lm.needTokenizer("reading text")
		}}, nil
	}
	return encoding(lm.tok, lm.m.Config.Vocab)
}

// describe says what was loaded.
func (lm *model) describe() string {
	what := "checkpoint"
	if lm.isGPT {
		what = "GPT-2 weights"
	}
	return fmt.Sprintf("%s %s (%s)", what, lm.path, describe(lm.m.Config))
}

// exists reports whether path names anything, a dangling link included.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// llmcModelMagic is the first int32 of llm.c's gpt2_*.bin.
const llmcModelMagic = 20240326

// modelFile returns the file of --checkpoint p: p itself, or in a
// directory its checkpoint.safetensors, else its model.safetensors (the
// first of them that exists, as a file or anything else).
func modelFile(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return p, nil // the loader reports what is wrong
	}
	// The first name that exists is the model, whatever it is: a
	// directory or a FIFO of that name is reported as such by the loader,
	// not passed over.
	for _, name := range []string{gpt.CheckpointFile, gpt.HFFile} {
		if f := filepath.Join(p, name); exists(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("%s holds neither %s (tinygpt's) nor %s (Hugging Face's GPT-2); for llm.c's weights give the gpt2_*.bin file", p, gpt.CheckpointFile, gpt.HFFile)
}

// isGPT2File reports whether the regular file path is GPT-2 weights rather
// than one of our checkpoints: llm.c's magic number, or a safetensors
// header whose metadata does not say "tinygpt/1". Anything else (not a
// regular file, unreadable, damaged) is left to gpt.Load to report.
func isGPT2File(path string) bool {
	f, size, err := readfile.Open(path, math.MaxInt64)
	if err != nil {
		return false
	}
	defer f.Close()
	var pre [8]byte
	if _, err := io.ReadFull(f, pre[:]); err != nil {
		return false
	}
	if encbin.LittleEndian.Uint32(pre[:4]) == llmcModelMagic {
		return true
	}
	hl := encbin.LittleEndian.Uint64(pre[:])
	if hl < 2 || hl > 100<<20 || int64(hl) > size-8 {
		return false
	}
	hdr := make([]byte, hl)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return false
	}
	var h struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if json.Unmarshal(hdr, &h) != nil {
		return false
	}
	return h.Meta[gpt.MetaFormat] != "tinygpt/1"
}

// loadModel reads the model of --checkpoint (or --init) p and its
// tokenizer: the one named by tokDir when given, else our checkpoint's
// own (its character vocabulary or embedded BPE files), else for GPT-2
// weights the tokenizer files beside them. GPT-2 weights without a
// tokenizer load with tok nil and noTok set (a command that needs one
// says so with needTokenizer); a tokenizer of another size than the
// model's vocabulary is an error. The model's matrices are in format
// wf.f: GPT-2 weights are read straight into it (gpt.WithLoadWeights,
// no float32 model in memory for a safetensors file), our float32
// checkpoints are read as float32 and converted (gpt.Model.WithWeights).
// A checkpoint tinygpt convert wrote keeps its format, which wf.f must
// be when wf.set (a usage error otherwise: its float32 weights are gone);
// unset, wf.f is float32 for every other file.
func loadModel(p, tokDir, cmd string, wf weightsFlag, stderr io.Writer) (*model, error) {
	path, err := modelFile(p)
	if err != nil {
		return nil, err
	}
	lm := &model{path: path}
	lm.isGPT = isGPT2File(path)
	// The tokenizer files are read and parsed on a goroutine of their own
	// while the model loads (GPT-2's take about a tenth of a second of
	// CPU); their result is used, and their error reported, in the order
	// below, after the model's.
	type found struct {
		t   *tokenizer
		err error
	}
	var tokCh chan found
	if tokDir != "" || lm.isGPT {
		dir := tokDir
		if dir == "" {
			dir = filepath.Dir(path)
		}
		tokCh = make(chan found, 1)
		go func() {
			t, err := findTokenizer(dir)
			tokCh <- found{t, err}
		}()
	}
	if lm.isGPT {
		if lm.m, err = gpt.LoadGPT2(path, gpt.WithLoadWeights(wf.f)); err != nil {
			return nil, err
		}
	} else {
		if lm.ck, err = loadCheckpointFile(path, cmd, stderr); err != nil {
			return nil, err
		}
		lm.m = lm.ck.Model
		if lm.ck.Vocab != nil {
			lm.tok = &tokenizer{chars: lm.ck.Vocab, from: path}
		} else if lm.tok, err = tokenizerFromMeta(lm.ck.Extra, path); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %v", path, err)
		}
	}
	if tokDir != "" {
		if lm.ck != nil && lm.ck.Vocab != nil {
			return nil, usageError{fmt.Sprintf("--tokenizer_dir: %s was trained on characters and keeps its vocabulary", path)}
		}
		f := <-tokCh
		t, err := f.t, f.err
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, fmt.Errorf("--tokenizer_dir %s holds no tokenizer: neither encoder.json and vocab.bpe, nor vocab.json and merges.txt, nor %s", tokDir, llmcTokenizer)
		}
		lm.tok = t
	} else if lm.isGPT {
		dir := filepath.Dir(path)
		f := <-tokCh
		if lm.tok, err = f.t, f.err; err != nil {
			return nil, err
		}
		if lm.tok == nil {
			lm.noTok = dir
		}
	}
	if lm.tok != nil && lm.tok.size() != lm.m.Config.Vocab {
		return nil, fmt.Errorf("the tokenizer (%s) has %d tokens, but the model %s has a vocabulary of %d", lm.tok.describe(), lm.tok.size(), path, lm.m.Config.Vocab)
	}
	if lm.ck != nil {
		if has := lm.m.Weights(); has != gpt.WeightsF32 {
			switch {
			case cmd == "train":
				return nil, usageError{fmt.Sprintf("--init %s holds %v weights (written by tinygpt convert), for inference only: give the float32 checkpoint it was converted from", path, has)}
			case wf.set && wf.f != has:
				return nil, usageError{fmt.Sprintf("--weights %v: %s holds %v weights (written by tinygpt convert), used as they are: give --weights %v or none, or the float32 checkpoint it was converted from", wf.f, path, has, has)}
			}
			return lm, nil
		}
		if err := lm.convert(wf.f); err != nil {
			return nil, err
		}
	}
	return lm, nil
}

// weightsFlag is --weights: the format f, and whether the flag was given
// (set) or left empty (float32, or a converted checkpoint's own format).
type weightsFlag struct {
	f   gpt.Weights
	set bool
}

// weightsUsage is the help of sample's and eval's --weights.
const weightsUsage = "format of the blocks' matrices and the LM head: f32, bf16 or int8 (converted on load; the embeddings, LayerNorms, biases and activations stay float32); empty: a checkpoint's of tinygpt convert, which loads as it is with no conversion (another format is a usage error), else f32"

// parseWeights reads --weights: empty is unset (see weightsFlag), else a
// usage error unless it names a format.
func parseWeights(s string) (weightsFlag, error) {
	if s == "" {
		return weightsFlag{f: gpt.WeightsF32}, nil
	}
	f, err := gpt.ParseWeights(s)
	if err != nil {
		return weightsFlag{}, usageError{fmt.Sprintf("--weights %q must be f32, bf16 or int8", s)}
	}
	return weightsFlag{f: f, set: true}, nil
}

// convert replaces lm's model by its weights in format f (gpt.Model.WithWeights),
// keeping no reference to the float32 one.
func (lm *model) convert(f gpt.Weights) error {
	m, err := lm.m.WithWeights(f)
	if err != nil {
		return err
	}
	lm.m = m
	if lm.ck != nil {
		lm.ck.Model = m
	}
	return nil
}

// precisionUsage is the help of sample's and eval's --precision.
const precisionUsage = "`arithmetic` of the matrix products over many rows (a prompt, evaluation batches): f32, or bf16 (operands rounded to bfloat16, float32 sums; with --weights bf16 the weights are read as they are); decoding a token at a time stays float32"

// parsePrecision reads --precision.
func parsePrecision(s string) (gpt.Precision, error) {
	p, err := gpt.ParsePrecision(s)
	if err != nil {
		return 0, usageError{fmt.Sprintf("--precision %q must be f32 or bf16", s)}
	}
	return p, nil
}
