package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/heads"
	"github.com/simdgpt/simdgpt/internal/interrupt"
)

// checkpointPath returns the checkpoint file of p, a checkpoint directory
// or file.
func checkpointPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, gpt.CheckpointFile)
	}
	return p
}

// loadCheckpoint loads the checkpoint of --checkpoint p (a directory or a
// file), printing its warning, if any, on stderr.
func loadCheckpoint(p, cmd string, stderr io.Writer) (*gpt.Checkpoint, error) {
	return loadCheckpointFile(checkpointPath(p), cmd, stderr)
}

// loadCheckpointFile loads the checkpoint file path (a directory there is
// refused by gpt.Load as not a regular file), printing its warning, if
// any, on stderr. The commands that call it do not resume training, so
// the optimizer state a training checkpoint holds is verified but not
// kept (gpt.LoadForInference): sampling from a run's checkpoint does not
// read twice the model's size into memory.
func loadCheckpointFile(path, cmd string, stderr io.Writer) (*gpt.Checkpoint, error) {
	ck, err := gpt.LoadForInference(path)
	if err != nil {
		return nil, err
	}
	if ck.Warning != "" {
		fmt.Fprintf(stderr, "tinygpt %s: warning: %s: %s\n", cmd, path, ck.Warning)
	}
	return ck, nil
}

func runAttn(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("attn", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "checkpoints", "checkpoint `dir`ectory (or file) written by tinygpt train")
	prompt := fs.String("prompt", "", "`text` whose attention to draw, at most the model's block size in tokens (token ids separated by spaces for a model trained on token ids)")
	out := fs.String("out", "attention", "`dir`ectory for the images (created if missing)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt attn --checkpoint DIR --prompt TEXT [--out DIR]

Runs the model over the prompt and draws, for every layer and head, a
heatmap of the attention probabilities (rows are queries, columns keys,
both labelled with the prompt's characters): layer<L>_head<H>.png, and one
grid of all the heads of a layer on a common colour scale: layer<L>.png.
Ctrl-C or SIGTERM stops it after the image in progress (a second signal
at once), with a line on stderr; the exit status is 130 (SIGINT) or 143
(SIGTERM).

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return st
	}
	switch {
	case *prompt == "":
		return report(stderr, "attn", usageError{"--prompt is empty"})
	case *ckpt == "":
		return report(stderr, "attn", usageError{"--checkpoint is empty: name the checkpoint whose attention to draw"})
	case *out == "":
		return report(stderr, "attn", usageError{"--out is empty: name the directory for the images"})
	}
	w := watch("attn", stderr)
	defer w.Stop()
	ck, err := loadCheckpoint(*ckpt, "attn", stderr)
	if err != nil {
		return report(stderr, "attn", err)
	}
	m := ck.Model
	var toks []int32
	var labels []string
	if ck.Vocab != nil {
		ids, err := ck.Vocab.Encode(*prompt)
		if err != nil {
			return report(stderr, "attn", usageError{fmt.Sprintf("--prompt: %v", err)})
		}
		for _, id := range ids {
			toks = append(toks, int32(id))
			labels = append(labels, string(ck.Vocab.Token(int(id))))
		}
	} else {
		for _, f := range strings.Fields(*prompt) {
			id, err := strconv.Atoi(f)
			if err != nil || id < 0 || id >= m.Config.Vocab {
				return report(stderr, "attn", usageError{fmt.Sprintf("--prompt: %q is not a token id below %d", f, m.Config.Vocab)})
			}
			toks = append(toks, int32(id))
			labels = append(labels, f)
		}
	}
	if len(toks) > m.Config.BlockSize {
		return report(stderr, "attn", usageError{fmt.Sprintf("--prompt has %d tokens, more than the model's block size %d", len(toks), m.Config.BlockSize)})
	}
	if err := gpt.CheckMemory(fmt.Sprintf("drawing the attention of %d tokens (%s)", len(toks), describe(m.Config)), attnBytes(m.Config, len(toks))); err != nil {
		return report(stderr, "attn", err)
	}
	maps, err := heads.Maps(m, toks, labels)
	if err != nil {
		return report(stderr, "attn", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return report(stderr, "attn", err)
	}
	paths, err := heads.WriteContext(w.Context(), *out, maps)
	if errors.Is(err, context.Canceled) {
		sig := w.Signal()
		fmt.Fprintf(stderr, "tinygpt attn: interrupted by %s after writing %d images to %s\n", interrupt.Name(sig), len(paths), *out)
		return interrupt.ExitStatus(sig)
	}
	if err != nil {
		return report(stderr, "attn", err)
	}
	fmt.Fprintf(stdout, "%s × %s over %d tokens: wrote %d images to %s\n", plural(len(maps), "layer"), plural(len(maps[0]), "head"), len(toks), len(paths), *out)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return 0
}

// plural returns "1 head", "4 heads".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// attnBytes estimates the memory that drawing the attention of t tokens
// takes besides the model: the training forward's activations of one
// sequence of t tokens (Model.Forward keeps the probabilities drawn),
// a t×t map of float32 for every layer and head, and the largest image
// drawn (its pixels grow as t²: heads.WriteBytes).
func attnBytes(c gpt.Config, t int) int64 {
	ct := c
	ct.BlockSize = t
	L, H, T := int64(c.Layers), int64(max(c.Heads, 1)), int64(t)
	return gpt.TrainBytes(ct, 1, 1) - gpt.ModelBytes(ct, true) + 4*L*H*T*T + heads.WriteBytes(c.Layers, max(c.Heads, 1), t)
}
