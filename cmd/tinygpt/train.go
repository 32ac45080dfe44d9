package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/internal/atomicfile"
	"github.com/simdgpt/simdgpt/internal/interrupt"
	"github.com/simdgpt/simdgpt/internal/readfile"
	"github.com/simdgpt/simdgpt/viz"
)

// Files the training run writes in its checkpoint directory.
const (
	lossCSV = "loss.csv"
	lossPNG = "loss.png"
)

// builtinSymbols is the size of the built-in task's corpus (generated from
// a fixed seed, so every run trains and validates on the same text).
const (
	builtinSymbols = 200000
	builtinSeed    = 1
)

type trainFlags struct {
	data                           string
	epochs                         float64
	batch, dModel, heads, layers   int
	lr                             float64
	dir                            string
	block, maxIters                int
	evalInterval, evalIters, every int
	seed                           uint64
	threads                        int
	resume, force                  bool
	// Only in train: fine-tuning, and BPE or tied embeddings for new
	// models.
	init, tokenizer, tokDir string
	tie                     bool
	precision               string
	prec                    gpt.Precision
	set                     map[string]bool // flags given on the command line
}

func runTrain(args []string, stdout, stderr io.Writer) int {
	var f trainFlags
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	f.register(fs)
	f.registerTrainOnly(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: tinygpt train [flags]

Trains a GPT and writes checkpoint.safetensors, loss.csv and loss.png into
--checkpoint_dir (all rewritten atomically as training goes). Ctrl-C or
SIGTERM stops the run at the end of the step or evaluation batch in
progress and saves a checkpoint of the last completed step before exiting
with status 130 (SIGINT) or 143 (SIGTERM); later signals do not cut the
save short. --resume continues it exactly (an interrupted evaluation is
run again first).
--init fine-tunes a checkpoint or GPT-2 weights instead of starting from
random ones; --tokenizer gpt2 trains a new model on GPT-2's BPE tokens.

flags:
`)
		fs.PrintDefaults()
	}
	if done, st := f.parse(fs, args, stdout, stderr); done {
		return st
	}
	return finish(stderr, "train", train(f, stdout, stderr))
}

// parse parses and validates the training flags of fs (see parseFlags for
// the results).
func (f *trainFlags) parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (bool, int) {
	if done, st := parseFlags(fs, args, stdout, stderr); done {
		return true, st
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if err := f.validate(); err != nil {
		return true, report(stderr, fs.Name(), err)
	}
	return false, 0
}

// finish returns the exit status of a command that ended with err: 0,
// interrupt.ExitStatus when a signal stopped it (it has printed its own
// message), else what report gives.
func finish(stderr io.Writer, cmd string, err error) int {
	var ie interruptedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ie):
		return interrupt.ExitStatus(ie.sig)
	}
	return report(stderr, cmd, err)
}

// register defines the training flags on fs (shared by train and compare).
func (f *trainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "training `file`: UTF-8 text (character level), or uint16 token ids (llm.c's format, recognised by its magic number, or raw with extension .bin/.tok); empty: the built-in task")
	fs.Float64Var(&f.epochs, "epochs", 0, "passes over the training tokens (sets --max_iters to epochs × tokens / (batch_size × block_size)); 0: use --max_iters")
	fs.IntVar(&f.batch, "batch_size", 16, "sequences per step")
	fs.IntVar(&f.dModel, "d_model", 64, "model width (a multiple of --n_heads)")
	fs.IntVar(&f.heads, "n_heads", 1, "attention heads per layer (1: the single-head path)")
	fs.IntVar(&f.layers, "n_layers", 2, "transformer blocks")
	fs.Float64Var(&f.lr, "lr", 3e-3, "peak learning rate (warm-up, then cosine decay to lr/10)")
	fs.StringVar(&f.dir, "checkpoint_dir", "checkpoints", "`dir`ectory for the checkpoint, loss.csv and loss.png")
	fs.IntVar(&f.block, "block_size", 32, "context length in tokens")
	fs.IntVar(&f.maxIters, "max_iters", 3000, "optimizer steps")
	fs.IntVar(&f.evalInterval, "eval_interval", 100, "evaluate (and log) every this many steps")
	fs.IntVar(&f.evalIters, "eval_iters", 20, "batches per evaluation")
	fs.IntVar(&f.every, "checkpoint_every", 500, "save a checkpoint every this many steps (0: only at the end and on Ctrl-C)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (initialisation and batches)")
	fs.IntVar(&f.threads, "threads", 0, "threads (GOMAXPROCS); 0: all CPUs")
	fs.BoolVar(&f.resume, "resume", false, "continue the run saved in --checkpoint_dir exactly where it stopped")
	fs.BoolVar(&f.force, "force", false, "replace an existing checkpoint in --checkpoint_dir")
}

// registerTrainOnly defines the flags of train that compare does not have.
func (f *trainFlags) registerTrainOnly(fs *flag.FlagSet) {
	fs.StringVar(&f.precision, "precision", "f32", "`arithmetic` of the matrix products: f32, or bf16 (operands rounded to bfloat16, float32 sums, as torch.autocast; parameters, optimizer state and checkpoints stay float32); with --resume, the checkpoint's unless given")
	fs.StringVar(&f.init, "init", "", "start from the weights of this `checkpoint` (a directory or file written by tinygpt train, or GPT-2 weights: Hugging Face's model.safetensors or its directory, llm.c's gpt2_*.bin) instead of random ones: fine-tuning, on --data tokenized with its tokenizer; its shape is kept (--block_size may shorten it)")
	fs.StringVar(&f.tokenizer, "tokenizer", "chars", "`vocabulary` of a new model: chars (built from the text; a token file's ids) or gpt2 (GPT-2's BPE from --tokenizer_dir, saved in the checkpoint)")
	fs.StringVar(&f.tokDir, "tokenizer_dir", "", "`dir`ectory of the BPE tokenizer (encoder.json and vocab.bpe, or vocab.json and merges.txt; llm.c's gpt2_tokenizer.bin for token files) for --tokenizer gpt2, or for --init when it is not the checkpoint's own or beside GPT-2 weights")
	fs.BoolVar(&f.tie, "tie_embeddings", false, "new model: the LM head is the transposed token embedding (GPT-2's layout) instead of a matrix of its own")
}

// interruptedError ends a command that a signal stopped, once it has
// saved what there was to save and said so.
type interruptedError struct{ sig os.Signal }

func (e interruptedError) Error() string { return "interrupted by " + interrupt.Name(e.sig) }

// watch catches SIGINT and SIGTERM for command cmd (see package
// interrupt); a signal after the first ends the process at once, with a
// line on stderr, until the command calls SetAgain(nil) on the watch.
func watch(cmd string, stderr io.Writer) *interrupt.Watch {
	return interrupt.Start(func(sig os.Signal) {
		fmt.Fprintf(stderr, "tinygpt %s: stopped by a second %s\n", cmd, interrupt.Name(sig))
		os.Exit(interrupt.ExitStatus(sig))
	})
}

func (f *trainFlags) validate() error {
	lim := []struct {
		name   string
		v, max int
	}{{"batch_size", f.batch, gpt.MaxBatch}, {"d_model", f.dModel, gpt.MaxWidth}, {"n_heads", f.heads, gpt.MaxHeads},
		{"n_layers", f.layers, gpt.MaxLayers}, {"block_size", f.block, gpt.MaxBlockSize}, {"max_iters", f.maxIters, gpt.MaxSteps},
		{"eval_interval", f.evalInterval, math.MaxInt32}, {"eval_iters", f.evalIters, maxEvalIters}}
	for _, p := range lim {
		if p.v < 1 {
			return usageError{fmt.Sprintf("--%s %d must be at least 1", p.name, p.v)}
		}
		if p.v > p.max {
			return usageError{fmt.Sprintf("--%s %d is above the limit of %d", p.name, p.v, p.max)}
		}
	}
	if f.precision != "" || f.set["precision"] {
		p, err := gpt.ParsePrecision(f.precision)
		if err != nil {
			return usageError{"--precision: " + err.Error()}
		}
		f.prec = p
	}
	switch {
	case f.dModel%f.heads != 0:
		return usageError{fmt.Sprintf("--d_model %d is not a multiple of --n_heads %d", f.dModel, f.heads)}
	case !(f.lr > 0) || math.IsInf(f.lr, 0):
		return usageError{fmt.Sprintf("--lr %g must be positive", f.lr)}
	case f.epochs < 0 || math.IsNaN(f.epochs) || math.IsInf(f.epochs, 0):
		return usageError{fmt.Sprintf("--epochs %g must be a finite number >= 0", f.epochs)}
	case f.epochs > 0 && f.set["max_iters"]:
		return usageError{"give --epochs or --max_iters, not both"}
	case f.every < 0:
		return usageError{fmt.Sprintf("--checkpoint_every %d must be >= 0", f.every)}
	case f.every > math.MaxInt32:
		return usageError{fmt.Sprintf("--checkpoint_every %d is above the limit of %d", f.every, math.MaxInt32)}
	case f.dir == "":
		return usageError{"--checkpoint_dir is empty: name the directory for the checkpoint, loss.csv and loss.png"}
	case f.threads < 0:
		return usageError{fmt.Sprintf("--threads %d must be >= 0", f.threads)}
	case f.threads > gpt.MaxThreads:
		return usageError{fmt.Sprintf("--threads %d is above the limit of %d", f.threads, gpt.MaxThreads)}
	case f.resume && f.force:
		return usageError{"--resume and --force contradict each other"}
	case f.tokenizer != "" && f.tokenizer != "chars" && f.tokenizer != "gpt2":
		return usageError{fmt.Sprintf("--tokenizer %q: want chars or gpt2", f.tokenizer)}
	case f.init != "" && f.resume:
		return usageError{"--init starts a run from a model's weights and --resume continues a run: give one of them"}
	case f.resume && (f.set["tokenizer"] || f.tokDir != "" || f.set["tie_embeddings"]):
		return usageError{"a resumed run keeps its vocabulary and layout: --tokenizer, --tokenizer_dir and --tie_embeddings are for new runs"}
	case f.init != "" && f.set["tokenizer"]:
		return usageError{"--tokenizer is for new models: --init takes the checkpoint's tokenizer (--tokenizer_dir names it when it is not found)"}
	case f.init != "" && f.set["tie_embeddings"]:
		return usageError{"--tie_embeddings is for new models: --init keeps the checkpoint's layout"}
	case f.tokenizer == "gpt2" && f.tokDir == "":
		return usageError{"--tokenizer gpt2 needs --tokenizer_dir, the directory of encoder.json and vocab.bpe (or vocab.json and merges.txt)"}
	case f.tokDir != "" && f.tokenizer != "gpt2" && f.init == "" && !f.resume:
		return usageError{"--tokenizer_dir is for --tokenizer gpt2 or --init"}
	case (f.init != "" || f.tokenizer == "gpt2") && f.data == "":
		return usageError{"--data is missing: name the text or token file to train on (the built-in task is for new character models)"}
	}
	return nil
}

// maxEvalIters bounds --eval_iters (batches per evaluation).
const maxEvalIters = 1 << 20

// loadData reads --data, or generates the built-in task for "".
func loadData(path string, block int) (*data.Dataset, error) {
	if path == "" {
		return data.FromText(data.Synthetic(builtinSymbols, builtinSeed), block)
	}
	return data.Load(path, block)
}

func describe(cfg gpt.Config) string {
	plural := func(n int, what string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", what)
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	return fmt.Sprintf("%s, %s, width %d, block %d, vocabulary %d", plural(cfg.Layers, "layer"), plural(cfg.Heads, "head"), cfg.Width, cfg.BlockSize, cfg.Vocab)
}

// runMeta is the checkpoint metadata key of the settings of this program
// that a resumed run takes over (see runSettings).
const runMeta = "tinygpt.run"

// runSettings are the settings of a run that its checkpoint keeps besides
// the model's and the optimizer's: the thread count (the results depend on
// it) and the evaluation and checkpoint intervals, so that --resume alone
// continues the run exactly as it was.
type runSettings struct {
	Threads         int `json:"threads"`
	EvalInterval    int `json:"eval_interval"`
	EvalIters       int `json:"eval_iters"`
	CheckpointEvery int `json:"checkpoint_every"`
	// FixedVocab is set when the data was tokenized with the model's
	// vocabulary (its characters, its BPE tokenizer, or its token-id
	// range) rather than given one built from the data: fine-tuned runs
	// and BPE ones. A resumed run tokenizes its data the same way.
	FixedVocab bool `json:"fixed_vocab,omitempty"`
	// Init is the checkpoint a fine-tuned run started from (for the
	// record).
	Init string `json:"init,omitempty"`
	// PendingEval is set when a signal interrupted the evaluation of the
	// checkpoint's step: a resumed run evaluates that step first.
	PendingEval bool `json:"pending_eval,omitempty"`
	// DataBytes and DataSHA256 are the size and the SHA-256 (hexadecimal)
	// of the training file when the run started or was last resumed
	// (absent for the built-in task): --resume --data accepts a file at
	// another path whose contents match them, a training file moved since.
	DataBytes  int64  `json:"data_bytes,omitempty"`
	DataSHA256 string `json:"data_sha256,omitempty"`
}

// fileDigest returns the size and the SHA-256 (hexadecimal) of the
// regular file path.
func fileDigest(path string) (int64, string, error) {
	f, size, err := readfile.Open(path, math.MaxInt64)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %v", path, err)
	}
	if n != size {
		return 0, "", fmt.Errorf("%s: %d bytes read of %d (the file changed while it was read)", path, n, size)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// digestData sets rs's digest of the training file path ("" is the
// built-in task, which has none).
func (rs *runSettings) digestData(path string) error {
	if path == "" {
		rs.DataBytes, rs.DataSHA256 = 0, ""
		return nil
	}
	var err error
	rs.DataBytes, rs.DataSHA256, err = fileDigest(path)
	return err
}

// adopt takes over the saved settings of a resumed run for the flags not
// given on the command line. It returns a note when --threads differs
// from the run's (the continuation is then not bit-identical).
func (f *trainFlags) adopt(ck *gpt.Checkpoint) (note string, rs runSettings, err error) {
	js, ok := ck.Extra[runMeta]
	if !ok {
		return "", rs, nil // written by an older version
	}
	if err := json.Unmarshal([]byte(js), &rs); err != nil || rs.Threads < 0 ||
		rs.EvalInterval < 1 || rs.EvalIters < 1 || rs.EvalIters > maxEvalIters || rs.CheckpointEvery < 0 {
		return "", rs, fmt.Errorf("bad %s metadata %q", runMeta, js)
	}
	if rs.Threads > gpt.MaxThreads && !f.set["threads"] {
		// The run's GOMAXPROCS (--threads 0 takes the environment's) may
		// be above what --threads accepts: continue at the limit.
		f.threads = gpt.MaxThreads
		note = fmt.Sprintf("note: the run's %d threads are above the limit of %d: training on %d; the results may differ from an uninterrupted run's in the last bits", rs.Threads, gpt.MaxThreads, gpt.MaxThreads)
		rs.Threads = gpt.MaxThreads
	}
	for _, s := range []struct {
		name      string
		flag      *int
		saved     int
		mustMatch bool
	}{
		{"threads", &f.threads, rs.Threads, true}, {"eval_interval", &f.evalInterval, rs.EvalInterval, false},
		{"eval_iters", &f.evalIters, rs.EvalIters, false}, {"checkpoint_every", &f.every, rs.CheckpointEvery, false},
	} {
		if !f.set[s.name] {
			*s.flag = s.saved
		} else if s.mustMatch && *s.flag != s.saved {
			note = fmt.Sprintf("note: --%s %d differs from the run's %d: the results will differ from an uninterrupted run's in the last bits", s.name, *s.flag, s.saved)
		}
	}
	return note, rs, nil
}

// sameData reports whether the --data path p names the file the checkpoint
// was trained on (saved as an absolute path).
func sameData(p, saved string) bool {
	if p == saved {
		return true
	}
	if p == "" || saved == "" {
		return false
	}
	if abs, err := filepath.Abs(p); err == nil && abs == saved {
		return true
	}
	a, errA := os.Stat(p)
	b, errB := os.Stat(saved)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// resumeData checks the --data of a resumed run against the file its
// checkpoint ck was trained on (rs: the checkpoint's settings) and sets
// ck.Train.Data to the file to train on. The saved path, or another path
// to the same file, is accepted (a file changed since is caught by its
// vocabulary); so is a file at another path whose size and SHA-256 are the
// saved ones (a training file moved since), which the run then continues
// on. Checkpoints without a saved digest accept only the saved file.
func resumeData(f *trainFlags, ck *gpt.Checkpoint, rs runSettings) error {
	if !f.set["data"] || sameData(f.data, ck.Train.Data) {
		return nil
	}
	if rs.DataSHA256 == "" || f.data == "" || ck.Train.Data == "" {
		return usageError{fmt.Sprintf("--data %s is not the file the checkpoint was trained on (%s; a resumed run keeps its data)", f.data, ck.Train.Data)}
	}
	size, sum, err := fileDigest(f.data)
	if err != nil {
		return err // naming the file
	}
	if size != rs.DataBytes || sum != rs.DataSHA256 {
		return usageError{fmt.Sprintf("--data %s is not the file the checkpoint was trained on (%s): its contents differ (%d bytes, SHA-256 %.16s…; the checkpoint's %d bytes, %.16s…)",
			f.data, ck.Train.Data, size, sum, rs.DataBytes, rs.DataSHA256)}
	}
	ck.Train.Data = absPath(f.data)
	return nil
}

// checkDataFile refuses a --data path whose contents would not fit in
// memory, before it is read (data.TextBytes; a fixed vocabulary's
// encoding checks its own memory before it runs: see encoding).
func checkDataFile(path string) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode().IsRegular() {
		return gpt.CheckMemory(fmt.Sprintf("reading %s (%s)", path, gpt.FormatBytes(st.Size())), data.TextBytes(st.Size()))
	}
	return nil // data.Load names what it is
}

// trainRun is what setup prepares: the trainer, its data, the loss log rows
// to continue from, the tokenizer the checkpoint records (nil: the
// character vocabulary of the data, saved as such, or token ids) and the
// settings to save with it.
type trainRun struct {
	tr   *gpt.Trainer
	d    *data.Dataset
	rows [][]string
	tok  *tokenizer
	rs   runSettings
}

// setup returns the run of a new or resumed training. It checks every
// size against the limits and the memory available before allocating the
// model.
func setup(f *trainFlags, ckPath string, out, errw io.Writer) (*trainRun, error) {
	// The directory and the files a run writes, refused now rather than
	// at its first save: what the writes would fail on, links followed.
	if err := atomicfile.CheckDir(f.dir); err != nil {
		return nil, fmt.Errorf("--checkpoint_dir: %w", err)
	}
	if st, err := os.Stat(f.dir); err == nil && st.IsDir() {
		for _, name := range []string{gpt.CheckpointFile, lossCSV, lossPNG} {
			if err := atomicfile.Check(filepath.Join(f.dir, name)); err != nil {
				return nil, err
			}
		}
	}
	existing, statErr := os.Stat(ckPath)
	if f.resume {
		if statErr != nil {
			return nil, fmt.Errorf("--resume: no checkpoint to resume in %s (%v)", f.dir, errors.Unwrap(statErr))
		}
		return resumeRun(f, ckPath, out, errw)
	}
	if statErr == nil && !f.force {
		what := "a checkpoint"
		if ck, err := gpt.Load(ckPath); err == nil {
			what = fmt.Sprintf("a checkpoint at step %d (%s)", ck.Step, describe(ck.Model.Config))
		} else {
			what = "an unreadable checkpoint"
		}
		return nil, fmt.Errorf("%s already holds %s (%s); pass --resume to continue it or --force to replace it", f.dir, what, existing.ModTime().Format(time.DateTime))
	}
	if err := checkDataFile(f.data); err != nil {
		return nil, err
	}
	r := &trainRun{}
	var m *gpt.Model
	var from string
	switch {
	case f.init != "":
		lm, err := loadModel(f.init, f.tokDir, "train", weightsFlag{f: gpt.WeightsF32}, errw)
		if err != nil {
			return nil, err
		}
		cfg := lm.m.Config
		for _, c := range []struct {
			name     string
			flag, ck int
		}{{"d_model", f.dModel, cfg.Width}, {"n_heads", f.heads, cfg.Heads}, {"n_layers", f.layers, cfg.Layers}} {
			if f.set[c.name] && c.flag != c.ck {
				return nil, usageError{fmt.Sprintf("--%s %d differs from the --init model's %d (fine-tuning keeps its shape)", c.name, c.flag, c.ck)}
			}
		}
		f.dModel, f.heads, f.layers = cfg.Width, cfg.Heads, cfg.Layers
		if !f.set["block_size"] {
			f.block = cfg.BlockSize
		} else if f.block > cfg.BlockSize {
			return nil, usageError{fmt.Sprintf("--block_size %d is above the --init model's block size of %d", f.block, cfg.BlockSize)}
		}
		enc, err := lm.encoding()
		if err != nil {
			return nil, err
		}
		if r.d, err = data.LoadEncoded(f.data, f.block, enc); err != nil {
			return nil, err
		}
		m = lm.m
		if lm.ck == nil || lm.ck.Vocab == nil {
			r.tok = lm.tok // characters are saved as the checkpoint's vocabulary
		}
		r.rs.FixedVocab, r.rs.Init = true, absPath(lm.path)
		from = "fine-tuning " + lm.describe() + " on "
	case f.tokenizer == "gpt2":
		tok, err := findTokenizer(f.tokDir)
		if err != nil {
			return nil, err
		}
		if tok == nil {
			return nil, fmt.Errorf("--tokenizer_dir %s holds no tokenizer: neither encoder.json and vocab.bpe, nor vocab.json and merges.txt, nor %s", f.tokDir, llmcTokenizer)
		}
		enc, err := encoding(tok, tok.size())
		if err != nil {
			return nil, err
		}
		if r.d, err = data.LoadEncoded(f.data, f.block, enc); err != nil {
			return nil, err
		}
		r.tok, r.rs.FixedVocab = tok, true
		from = "training on "
	default:
		var err error
		if r.d, err = loadData(f.data, f.block); err != nil {
			return nil, err
		}
		from = "training on "
	}
	if err := r.rs.digestData(f.data); err != nil {
		return nil, err
	}
	cfg := gpt.Config{Vocab: r.d.VocabSize, BlockSize: f.block, Layers: f.layers, Heads: f.heads, Width: f.dModel, TieEmbeddings: f.tie}
	if m != nil {
		cfg = m.Config
		cfg.BlockSize = f.block // cut below once the memory is known to be there
	}
	iters, err := itersFor(f, r.d)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckLimits(); err != nil {
		return nil, err
	}
	if err := checkTrainMemory(cfg, f.batch, f.threads); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return nil, err
	}
	switch {
	case m == nil:
		if m, err = gpt.New(cfg, f.seed); err != nil {
			return nil, err
		}
	case cfg.BlockSize < m.Config.BlockSize:
		if m, err = m.WithBlockSize(cfg.BlockSize); err != nil {
			return nil, err
		}
	}
	tc := gpt.DefaultTrainConfig(f.batch, iters, float32(f.lr), f.seed)
	tc.Data = absPath(f.data)
	tc.Precision = f.prec
	if r.tr, err = gpt.NewTrainer(m, r.d, tc); err != nil {
		return nil, err
	}
	src := f.data
	if src == "" {
		src = "the built-in task"
	}
	vocab := ""
	if r.tok != nil {
		vocab = " (" + r.tok.describe() + ")"
	}
	prec := ""
	if tc.Precision != gpt.PrecisionF32 {
		prec = ", products in " + tc.Precision.String()
	}
	fmt.Fprintf(out, "%s%s: %d training and %d validation tokens; %s%s, %d parameters; %d steps of %d×%d tokens%s\n",
		from, src, len(r.d.Train), len(r.d.Val), describe(cfg), vocab, cfg.NumParams(), tc.MaxIters, tc.BatchSize, cfg.BlockSize, prec)
	return r, nil
}

// absPath returns the absolute path of p ("" stays "").
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// resumeRun returns the run saved in the checkpoint ckPath.
func resumeRun(f *trainFlags, ckPath string, out, errw io.Writer) (*trainRun, error) {
	ck, err := gpt.Load(ckPath)
	if err != nil {
		return nil, err
	}
	if ck.Warning != "" {
		fmt.Fprintf(errw, "tinygpt train: warning: %s: %s\n", ckPath, ck.Warning)
	}
	if ck.Opt == nil {
		return nil, fmt.Errorf("%s has no optimizer state to resume from", ckPath)
	}
	cfg := ck.Model.Config
	for _, c := range []struct {
		name     string
		flag, ck any
	}{
		{"d_model", f.dModel, cfg.Width}, {"n_heads", f.heads, cfg.Heads}, {"n_layers", f.layers, cfg.Layers},
		{"block_size", f.block, cfg.BlockSize}, {"batch_size", f.batch, ck.Train.BatchSize},
		{"lr", float32(f.lr), ck.Train.LR}, {"seed", f.seed, ck.Train.Seed},
	} {
		if f.set[c.name] && fmt.Sprint(c.flag) != fmt.Sprint(c.ck) {
			return nil, usageError{fmt.Sprintf("--%s %v differs from the checkpoint's %v (a resumed run keeps its settings)", c.name, c.flag, c.ck)}
		}
	}
	note, rs, err := f.adopt(ck)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %v", ckPath, err)
	}
	if err := resumeData(f, ck, rs); err != nil {
		return nil, err
	}
	f.batch = ck.Train.BatchSize
	if err := checkDataFile(ck.Train.Data); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !f.set["data"] {
			return nil, fmt.Errorf("the checkpoint's training file %s is gone; give its new path with --data", ck.Train.Data)
		}
		return nil, err
	}
	// The digest of the file this run trains on, for the next resume.
	if err := rs.digestData(ck.Train.Data); err != nil {
		return nil, err
	}
	r := &trainRun{rs: rs}
	if rs.FixedVocab {
		if ck.Vocab == nil {
			if r.tok, err = tokenizerFromMeta(ck.Extra, ckPath); err != nil {
				return nil, fmt.Errorf("checkpoint %s: %v", ckPath, err)
			}
		} else {
			r.tok = &tokenizer{chars: ck.Vocab, from: ckPath}
		}
		enc, err := encoding(r.tok, cfg.Vocab)
		if err != nil {
			return nil, err
		}
		if ck.Vocab != nil {
			r.tok = nil // saved as the checkpoint's vocabulary
		}
		if r.d, err = data.LoadEncoded(ck.Train.Data, cfg.BlockSize, enc); err != nil {
			return nil, err
		}
	} else {
		if r.d, err = loadData(ck.Train.Data, cfg.BlockSize); err != nil {
			return nil, err
		}
		if (ck.Vocab == nil) != (r.d.Vocab == nil) || (r.d.Vocab != nil && r.d.Vocab.String() != ck.Vocab.String()) || r.d.VocabSize > cfg.Vocab {
			return nil, fmt.Errorf("the data %q no longer has the vocabulary the checkpoint was trained with", ck.Train.Data)
		}
	}
	total := ck.Train.MaxIters
	if f.set["max_iters"] || f.epochs > 0 {
		if total, err = itersFor(f, r.d); err != nil {
			return nil, err
		}
		if total <= ck.Step {
			what := fmt.Sprintf("--max_iters %d", f.maxIters)
			if f.epochs > 0 {
				what = fmt.Sprintf("--epochs %g (%d steps)", f.epochs, total)
			}
			return nil, usageError{fmt.Sprintf("%s: the checkpoint is at step %d already; ask for more steps to continue it", what, ck.Step)}
		}
	} else if ck.Step >= total && !rs.PendingEval {
		return nil, usageError{fmt.Sprintf("--resume: the run in %s is finished (step %d of %d); give --max_iters above %d to train it further", f.dir, ck.Step, total, ck.Step)}
	}
	threads, memNote, err := resumeThreads(f.threads, f.set["threads"], func(n int) error { return checkTrainMemory(cfg, ck.Train.BatchSize, n) })
	if err != nil {
		return nil, err
	}
	if memNote != "" {
		f.threads, note = threads, memNote
	}
	if f.set["precision"] && f.prec != ck.Train.Precision {
		// Parameters and optimizer state are float32 in either precision,
		// so the run continues; only its products change.
		fmt.Fprintf(errw, "tinygpt train: note: the run was trained with --precision %v; it continues with --precision %v\n", ck.Train.Precision, f.prec)
		ck.Train.Precision = f.prec
	}
	if r.tr, err = ck.Resume(r.d); err != nil {
		return nil, err
	}
	r.tr.Cfg.MaxIters = total
	// A log that does not parse starts afresh; one that is not a regular
	// file or too large to read is the user's to fix before it is replaced.
	if r.rows, err = readCSV(filepath.Join(f.dir, lossCSV), ck.Step); errors.Is(err, readfile.ErrNotRegular) || errors.Is(err, readfile.ErrTooLarge) {
		return nil, err
	}
	fmt.Fprintf(out, "resuming %s at step %d of %d (%s)\n", ckPath, ck.Step, r.tr.Cfg.MaxIters, describe(cfg))
	if note != "" {
		fmt.Fprintln(out, note)
	}
	return r, nil
}

// resumeThreads returns the thread count a resumed run trains on: saved
// (the run's, 0 for all CPUs; given: --threads on the command line) when
// check, the memory check at a thread count, passes. A saved count the
// memory here cannot hold (the replicas' gradients grow with it) falls
// back to the CPUs of this machine, then to 1, with a note: a checkpoint
// written on a larger machine still resumes. A count given with
// --threads is never changed.
func resumeThreads(saved int, given bool, check func(threads int) error) (int, string, error) {
	err := check(saved)
	if err == nil || given {
		return saved, "", err
	}
	from := saved
	if from == 0 {
		from = runtime.GOMAXPROCS(0)
	}
	for _, n := range []int{min(from, runtime.NumCPU()), 1} {
		if n < from && check(n) == nil {
			return n, fmt.Sprintf("note: the run's %d threads need more memory than is available here; training on %d (--threads sets it): the results will differ from an uninterrupted run's in the last bits", from, n), nil
		}
	}
	return saved, "", err
}

// checkTrainMemory refuses a run whose model, optimizer and activations
// would not fit in the memory available.
func checkTrainMemory(cfg gpt.Config, batch, threads int) error {
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	what := fmt.Sprintf("training %s with --batch_size %d on %d threads", describe(cfg), batch, threads)
	return gpt.CheckMemory(what, gpt.TrainBytes(cfg, batch, threads))
}

// itersFor returns the number of steps the flags ask for: --max_iters, or
// --epochs passes over d's training tokens (at most gpt.MaxSteps).
func itersFor(f *trainFlags, d *data.Dataset) (int, error) {
	if f.epochs > 0 {
		steps := math.Ceil(f.epochs * float64(len(d.Train)) / float64(f.batch*f.block))
		if !(steps <= gpt.MaxSteps) {
			return 0, usageError{fmt.Sprintf("--epochs %g means %.3g steps of %d×%d tokens over %d, more than the limit of %d", f.epochs, steps, f.batch, f.block, len(d.Train), int(gpt.MaxSteps))}
		}
		return max(1, int(steps)), nil
	}
	return f.maxIters, nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// startedHook, when set (by tests, in process), runs once a training run
// has passed its checks at the start and before its first step: what
// happens to the files after the checks.
var startedHook func()

func train(f trainFlags, stdout, stderr io.Writer) error {
	// Until training starts there is nothing to save: a second signal
	// ends the process at once.
	w := watch("train", stderr)
	defer w.Stop()
	ctx := w.Context()
	if f.threads > 0 {
		runtime.GOMAXPROCS(f.threads)
	}
	ckPath := filepath.Join(f.dir, gpt.CheckpointFile)
	r, err := setup(&f, ckPath, stdout, stderr)
	if err != nil {
		return err
	}
	if sig := w.Signal(); sig != nil {
		fmt.Fprintf(stderr, "tinygpt train: interrupted by %s before the first step: nothing saved\n", interrupt.Name(sig))
		return interruptedError{sig}
	}
	if startedHook != nil {
		startedHook()
	}
	// From here on a signal stops the run at the next step or evaluation
	// batch, which saves it; later signals are ignored.
	w.SetAgain(nil)
	tr, d, rows := r.tr, r.d, r.rows
	if f.threads > 0 { // a resumed run's saved thread count
		runtime.GOMAXPROCS(f.threads)
	}
	// Temporary files of saves a crash or a kill interrupted.
	for _, name := range []string{gpt.CheckpointFile, lossCSV, lossPNG} {
		atomicfile.RemoveStale(filepath.Join(f.dir, name))
	}
	p := newProgress(stdout, isTerminal(stdout))
	log := lossLog{dir: f.dir, rows: rows}
	rs := r.rs
	pendingEval := rs.PendingEval
	rs.PendingEval = false
	rs.Threads, rs.EvalInterval, rs.EvalIters, rs.CheckpointEvery = runtime.GOMAXPROCS(0), f.evalInterval, f.evalIters, f.every
	save := func() error {
		defer w.Hold()()
		settings, _ := json.Marshal(rs)
		extra := map[string]string{runMeta: string(settings)}
		if r.tok != nil {
			for k, v := range r.tok.meta {
				extra[k] = v
			}
		}
		if err := tr.SaveWith(ckPath, d.Vocab, extra); err != nil {
			return fmt.Errorf("saving the checkpoint: %v", err)
		}
		return nil
	}
	resumeCmd := "tinygpt train --checkpoint_dir " + shellQuote(f.dir) + " --resume"
	total := tr.Cfg.MaxIters
	tokensPerStep := tr.Cfg.BatchSize * tr.Model.Config.BlockSize
	start := time.Now()
	startStep := tr.Step()
	var trainTime time.Duration
	var sumLoss float64
	var nLoss int
	lastVal := math.NaN()
	// stop saves the checkpoint of the last completed step after a
	// signal; duringEval marks its evaluation as still to be done.
	stop := func(duringEval bool) error {
		p.done()
		rs.PendingEval = duringEval
		if err := save(); err != nil {
			return err
		}
		what := ""
		if duringEval {
			what = " during its evaluation (the resumed run evaluates it first)"
		}
		sig := w.Signal()
		fmt.Fprintf(stdout, "interrupted by %s at step %d of %d%s: checkpoint saved to %s; continue with: %s\n", interrupt.Name(sig), tr.Step(), total, what, ckPath, resumeCmd)
		return interruptedError{sig}
	}
	evaluate := func() error {
		val, err := tr.EvalContext(ctx, d.Val, f.evalIters)
		if err != nil {
			return stop(true) // the partial loss is not logged
		}
		if math.IsNaN(val) || math.IsInf(val, 0) {
			// As a NaN training loss: nothing worth saving.
			p.done()
			if tr.Step() == startStep {
				from := "the model's weights"
				if rs.Init != "" && tr.Step() == 0 {
					from = "the weights of " + rs.Init
				}
				return fmt.Errorf("step %d: the validation loss is %v: %s give logits that are not finite", tr.Step(), val, from)
			}
			return fmt.Errorf("step %d: the validation loss is %v; try a lower --lr", tr.Step(), val)
		}
		lastVal = val
		train := math.NaN()
		if nLoss > 0 {
			train = sumLoss / float64(nLoss)
		}
		sumLoss, nLoss = 0, 0
		tps := 0.0
		if trainTime > 0 {
			tps = float64((tr.Step()-startStep)*tokensPerStep) / trainTime.Seconds()
		}
		p.event(tr.Step(), total, train, val, tps, eta(start, startStep, tr.Step(), total))
		err = log.add(tr.Step(), train, val, float64(tr.Schedule().At(max(tr.Step()-1, 0))), tps, time.Since(start).Seconds())
		if err == nil {
			return nil
		}
		// A log or a picture that cannot be written must not cost
		// training: save the checkpoint, then stop with the reason.
		p.done()
		if serr := save(); serr != nil {
			return fmt.Errorf("writing the loss log: %v; and %v", err, serr)
		}
		if tr.Step() >= total {
			return fmt.Errorf("writing the loss log: %v; the run is complete: checkpoint of step %d saved to %s", err, tr.Step(), ckPath)
		}
		return fmt.Errorf("writing the loss log: %v; checkpoint of step %d saved to %s; fix it and continue with: %s", err, tr.Step(), ckPath, resumeCmd)
	}
	if tr.Step() == 0 || pendingEval {
		if err := evaluate(); err != nil {
			return err
		}
	}
	for tr.Step() < total {
		if ctx.Err() != nil {
			return stop(false)
		}
		t0 := time.Now()
		loss := tr.TrainStep()
		trainTime += time.Since(t0)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("step %d: the loss is %v; try a lower --lr", tr.Step(), loss)
		}
		sumLoss += loss
		nLoss++
		step := tr.Step()
		p.tick(step, total, loss, float64((step-startStep)*tokensPerStep)/trainTime.Seconds(), eta(start, startStep, step, total))
		if step%f.evalInterval == 0 || step == total {
			if err := evaluate(); err != nil {
				return err
			}
		}
		if f.every > 0 && step%f.every == 0 && step < total {
			if err := save(); err != nil {
				return err
			}
		}
	}
	p.done()
	if err := save(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "done: %d steps in %s, validation loss %s; wrote %s, %s and %s\nsample with: tinygpt sample --checkpoint %s\n",
		total, time.Since(start).Round(time.Second), fmtLoss(lastVal), ckPath, filepath.Join(f.dir, lossCSV), filepath.Join(f.dir, lossPNG), shellQuote(f.dir))
	return nil
}

func eta(start time.Time, from, step, total int) time.Duration {
	if step <= from {
		return 0
	}
	per := time.Since(start) / time.Duration(step-from)
	return per * time.Duration(total-step)
}

// lossLog keeps the loss table and rewrites loss.csv and loss.png
// atomically after every evaluation, so either can be opened mid-run.
type lossLog struct {
	dir  string
	rows [][]string
}

// maxLossCSV bounds the loss log, read whole on resume (about 50 bytes a
// row: 5 million evaluations).
const maxLossCSV = 256 << 20

var csvHeader = []string{"step", "train_loss", "val_loss", "lr", "tokens_per_s", "elapsed_s"}

func (l *lossLog) add(step int, train, val, lr, tps, elapsed float64) error {
	l.rows = append(l.rows, []string{strconv.Itoa(step), fmtLoss(train), fmtLoss(val),
		strconv.FormatFloat(lr, 'g', 6, 64), strconv.FormatFloat(tps, 'f', 0, 64), strconv.FormatFloat(elapsed, 'f', 1, 64)})
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(csvHeader)
	w.WriteAll(l.rows)
	if b.Len() > maxLossCSV {
		return fmt.Errorf("%s: %d bytes, more than the limit of %d it is read back with", filepath.Join(l.dir, lossCSV), b.Len(), maxLossCSV)
	}
	if err := gpt.WriteFileAtomic(filepath.Join(l.dir, lossCSV), b.Bytes()); err != nil {
		return err
	}
	var tx, ty, vx, vy []float64
	num := func(s string) float64 { // "" (not measured) is NaN, which the chart leaves out
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	for _, r := range l.rows {
		s := num(r[0])
		tx, ty, vx, vy = append(tx, s), append(ty, num(r[1])), append(vx, s), append(vy, num(r[2]))
	}
	img, err := viz.Chart{Title: "TinyGPT loss", XLabel: "step", YLabel: "cross-entropy (nats)",
		Curves: []viz.Curve{{Name: "train", X: tx, Y: ty}, {Name: "validation", X: vx, Y: vy}}}.Render()
	if err != nil {
		return err
	}
	return viz.WritePNG(filepath.Join(l.dir, lossPNG), img)
}

func fmtLoss(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

// readCSV returns the rows of an existing loss log up to step (to continue
// it on resume); a missing log has none. The log must be a regular file of
// at most maxLossCSV bytes.
func readCSV(path string, upTo int) ([][]string, error) {
	fh, _, err := readfile.Open(path, maxLossCSV)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer fh.Close()
	all, err := csv.NewReader(io.LimitReader(fh, maxLossCSV)).ReadAll()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var rows [][]string
	for _, r := range all[1:] {
		if s, err := strconv.Atoi(r[0]); err == nil && s <= upTo && len(r) == len(csvHeader) {
			rows = append(rows, r)
		}
	}
	return rows, nil
}
