// Command tinygpt trains a small GPT on the CPU and samples from it.
//
//	tinygpt train [flags]    train on a text or token file, or the built-in task
//	tinygpt sample [flags]   generate text from a checkpoint or GPT-2 weights
//	tinygpt eval [flags]     cross-entropy and perplexity of a model on a file
//	tinygpt attn [flags]     draw each head's attention over a prompt
//	tinygpt compare [flags]  train 1 head and H heads, chart both losses
//	tinygpt convert [flags]  write a checkpoint with bf16 or int8 matrices
//
// With no --data, train uses a built-in synthetic task (see package
// gpt/data) that needs several attention patterns at once, so --n_heads 4
// reaches a clearly lower loss than the default single head. sample, eval
// and train --init also read GPT-2 weights (Hugging Face's
// model.safetensors or llm.c's gpt2_*.bin) with GPT-2's BPE tokenizer.
// Run `tinygpt <command> --help` for the flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/simdgpt/simdgpt/kernels"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: tinygpt <command> [flags]

commands:
  train    train a model (on --data, or the built-in task without it)
  sample   generate text from a trained model's checkpoint or GPT-2 weights
  eval     cross-entropy and perplexity of a checkpoint or GPT-2 on a file
  attn     draw every head's attention over a prompt as heatmaps
  compare  train with 1 head and with --n_heads heads, chart both losses
  convert  write a checkpoint's or GPT-2's matrices in bf16 or int8, to load with no conversion

Run 'tinygpt <command> --help' for a command's flags.
`

// run is the whole program: it returns the exit status (0 ok, 1 failure,
// 2 bad usage, 130 stopped by SIGINT, 143 by SIGTERM). Every command
// stops at the end of the batch, step, token or image in progress when one
// of those signals arrives, saves what it has to save and prints one line.
func run(args []string, stdout, stderr io.Writer) int {
	if err := kernels.EnvError(); err != nil {
		// The library fell back to the automatic choice; a program asked
		// to run on one implementation stops instead.
		fmt.Fprintf(stderr, "tinygpt: %v\n", err)
		return 2
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "train":
		return runTrain(args[1:], stdout, stderr)
	case "sample":
		return runSample(args[1:], stdout, stderr)
	case "eval":
		return runEval(args[1:], stdout, stderr)
	case "attn":
		return runAttn(args[1:], stdout, stderr)
	case "compare":
		return runCompare(args[1:], stdout, stderr)
	case "convert":
		return runConvert(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "tinygpt: unknown command %q (want train, sample, eval, attn, compare or convert; see tinygpt --help)\n", args[0])
		return 2
	}
}

// usageError is a bad command line: reported on one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags parses args with fs, printing the help to stdout for -h. It
// returns (done, status): done means the caller should return status.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (bool, int) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return true, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "tinygpt %s: %v (see tinygpt %s --help)\n", fs.Name(), firstLine(err.Error()), fs.Name())
		return true, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tinygpt %s: unexpected argument %q (see tinygpt %s --help)\n", fs.Name(), fs.Arg(0), fs.Name())
		return true, 2
	}
	return false, 0
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// report prints err on one line and returns its exit status.
func report(stderr io.Writer, cmd string, err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "tinygpt %s: %s (see tinygpt %s --help)\n", cmd, ue.msg, cmd)
		return 2
	}
	fmt.Fprintf(stderr, "tinygpt %s: %s\n", cmd, firstLine(err.Error()))
	return 1
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
