//go:build unix

package main

import (
	"bytes"
	"context"
	encbin "encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

// The binaries the command-line tests run, built once per test binary
// (with the tags of the test: see purego_test.go).
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary returns the path of the built tinygpt, kernelbench or trainbench.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "tinygpt-test-bin"); buildErr != nil {
			return
		}
		for _, pkg := range []string{".", "../kernelbench", "../trainbench"} {
			out, err := exec.Command("go", "build", "-tags", buildTags, "-o", binDir, pkg).CombinedOutput()
			if err != nil {
				buildErr = errors.New(string(out))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return filepath.Join(binDir, name)
}

// hang bounds a run of the bad-input table: one still running after it
// waits on something (a FIFO) and fails the test instead of hanging it.
const hang = 2 * time.Minute

// runBinary runs a built binary and returns its exit status and output;
// a run longer than hang is killed and fails the test.
func runBinary(t *testing.T, name string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t, name), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q still running after %v (blocked?), killed; stderr %q", name, args, hang, errb.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("%s %q: %v", name, args, err)
	return 0, "", ""
}

// fixtures are the files the bad-input table refers to.
type fixtures struct {
	dir               string
	good, finished    string // checkpoint directories: trained; trained, finished, loss.csv deleted
	huge, flipped     string // checkpoint files: width edited to 1e9 (valid checksum); a header bit flipped
	hugeDir           string // a checkpoint directory holding huge
	text, magic, fifo string // data files
	longWord          string // a data file of one 2 MiB pre-token
	nan               string // a -compare file with NaN ns/op
	lossPNGDir        string // a checkpoint directory whose loss.png links into a missing directory
	danglingDir       string // a checkpoint directory whose checkpoint.safetensors links into a missing directory
	relDanglingDir    string // the same with a relative link through a second link
	ckIsDir, hfIsDir  string // directories whose checkpoint.safetensors, model.safetensors is a directory
	danglingTarget    string // where danglingDir's link leads
	overflow          string // a checkpoint of finite weights ±3e38, whose logits are NaN
	synthetic         string // a text of the built-in task's characters
	lossPNGIsDir      string // a checkpoint directory whose loss.png is a directory
	ckFIFODir         string // a checkpoint directory whose checkpoint.safetensors is a FIFO
	zero              string // a link to /dev/zero
	nullDir           string // a checkpoint directory whose loss.csv links to /dev/null
	csvFIFO, csvZero  string // copies of good whose loss.csv is a FIFO, a link to /dev/zero
	csvHuge           string // a copy of good whose loss.csv is above maxLossCSV
	configFIFO        string // GPT-2 weights whose config.json is a FIFO
	configZero        string // GPT-2 weights whose config.json links to /dev/zero
	tokFIFO           string // a tokenizer directory whose encoder.json is a FIFO
	missing           string // a path that does not exist
	g                 *gpt2Fixture
	otherTok          string // a BPE tokenizer directory of 256 tokens
	notGPT2           string // a safetensors file of a tensor GPT-2 does not have
}

func makeFixtures(t *testing.T) *fixtures {
	t.Helper()
	dir := t.TempDir()
	f := &fixtures{dir: dir, good: filepath.Join(dir, "good"), finished: filepath.Join(dir, "finished"),
		huge: filepath.Join(dir, "huge.safetensors"), flipped: filepath.Join(dir, "flipped.safetensors"),
		text: filepath.Join(dir, "text.txt"), magic: filepath.Join(dir, "magic.bin"), fifo: filepath.Join(dir, "fifo.txt"),
		nan: filepath.Join(dir, "nan.txt"), longWord: filepath.Join(dir, "long.txt"), hugeDir: filepath.Join(dir, "hugedir"), lossPNGDir: filepath.Join(dir, "losspng"), missing: filepath.Join(dir, "missing")}
	if st, _, errs := runCmd(tiny(f.good, "--max_iters", "10", "--threads", "1")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	if st, _, errs := runCmd(tiny(f.finished, "--max_iters", "10", "--threads", "1")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	os.Remove(filepath.Join(f.finished, lossCSV))
	good, err := os.ReadFile(filepath.Join(f.good, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]int
	json.Unmarshal([]byte(meta[gpt.MetaConfig]), &cfg)
	cfg["width"] = 1e9
	js, _ := json.Marshal(cfg)
	meta[gpt.MetaConfig] = string(js)
	huge, err := safetensors.Encode(ts, meta)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[bytes.Index(good, []byte(`"step":"10"`))+9] ^= 1 // step 10 -> 11
	toks := make([]uint16, 2000)
	for i := range toks {
		toks[i] = uint16(i % 40)
	}
	magic := data.EncodeTokens(toks, true)
	magic[0] ^= 1
	for p, b := range map[string][]byte{
		f.huge: huge, f.flipped: flipped, f.magic: magic,
		f.text:     []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)),
		f.longWord: bytes.Repeat([]byte("a"), 2<<20),
		f.nan:      []byte("BenchmarkDot/shape=n=256/impl=generic 100 12 ns/op\nBenchmarkDot/shape=n=256/impl=generic 100 NaN ns/op\n"),
	} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(f.hugeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.hugeDir, gpt.CheckpointFile), huge, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(f.fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f.lossPNGIsDir, f.ckFIFODir, f.zero, f.nullDir = filepath.Join(dir, "losspngisdir"), filepath.Join(dir, "ckfifo"), filepath.Join(dir, "zero"), filepath.Join(dir, "nulldir")
	f.csvFIFO, f.csvZero, f.csvHuge = filepath.Join(dir, "csvfifo"), filepath.Join(dir, "csvzero"), filepath.Join(dir, "csvhuge")
	if err := os.MkdirAll(filepath.Join(f.lossPNGIsDir, lossPNG), 0o755); err != nil {
		t.Fatal(err)
	}
	// A log write that fails during the run (checked beforehand, the link
	// leads to a file that could be created): the checkpoint must be saved.
	mustSymlink(t, filepath.Join("gone", lossPNG), filepath.Join(f.lossPNGDir, lossPNG))
	f.danglingDir, f.relDanglingDir, f.ckIsDir, f.hfIsDir = filepath.Join(dir, "dl"), filepath.Join(dir, "reldl"), filepath.Join(dir, "ckisdir"), filepath.Join(dir, "hfisdir")
	f.danglingTarget = filepath.Join(dir, "nonexistent", "dir", "ck.safetensors")
	mustSymlink(t, f.danglingTarget, filepath.Join(f.danglingDir, gpt.CheckpointFile))
	mustSymlink(t, "next", filepath.Join(f.relDanglingDir, gpt.CheckpointFile))
	mustSymlink(t, "../nonexistent/dir/ck.safetensors", filepath.Join(f.relDanglingDir, "next"))
	for _, d := range []string{filepath.Join(f.ckIsDir, gpt.CheckpointFile), filepath.Join(f.hfIsDir, gpt.HFFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustFIFO(t, filepath.Join(f.ckFIFODir, gpt.CheckpointFile))
	mustSymlink(t, "/dev/zero", f.zero)
	mustSymlink(t, "/dev/null", filepath.Join(f.nullDir, lossCSV))
	for _, d := range []string{f.csvFIFO, f.csvZero, f.csvHuge} {
		mustWrite(t, filepath.Join(d, gpt.CheckpointFile), good)
	}
	mustFIFO(t, filepath.Join(f.csvFIFO, lossCSV))
	mustSymlink(t, "/dev/zero", filepath.Join(f.csvZero, lossCSV))
	mustWrite(t, filepath.Join(f.csvHuge, lossCSV), nil)
	if err := os.Truncate(filepath.Join(f.csvHuge, lossCSV), maxLossCSV+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.overflow = writeOverflowing(t, filepath.Join(dir, "overflow"))
	f.synthetic = filepath.Join(dir, "synthetic.txt")
	mustWrite(t, f.synthetic, []byte(data.Synthetic(5000, 2)))
	f.g = newGPT2Fixture(t)
	f.configFIFO, f.configZero, f.tokFIFO = filepath.Join(dir, "configfifo"), filepath.Join(dir, "configzero"), filepath.Join(dir, "tokfifo")
	for _, d := range []string{f.configFIFO, f.configZero} {
		for _, name := range []string{gpt.HFFile, "vocab.json", "merges.txt"} {
			b, err := os.ReadFile(filepath.Join(f.g.hfDir, name))
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(d, name), b)
		}
	}
	mustFIFO(t, filepath.Join(f.configFIFO, gpt.HFConfigFile))
	mustSymlink(t, "/dev/zero", filepath.Join(f.configZero, gpt.HFConfigFile))
	vb, err := os.ReadFile(filepath.Join(f.g.tokDir, "vocab.bpe"))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.tokFIFO, "vocab.bpe"), vb)
	mustFIFO(t, filepath.Join(f.tokFIFO, "encoder.json"))
	f.otherTok, f.notGPT2 = filepath.Join(dir, "othertok"), filepath.Join(dir, "notgpt2", gpt.HFFile)
	bytesOnly := map[string]int{}
	for b := range 256 {
		bytesOnly[toAlphabet([]byte{byte(b)})] = b
	}
	ej, _ := json.Marshal(bytesOnly)
	mustWrite(t, filepath.Join(f.otherTok, "encoder.json"), ej)
	mustWrite(t, filepath.Join(f.otherTok, "vocab.bpe"), []byte("#version: 0.2\n"))
	hdr := []byte(`{"__metadata__":{"format":"pt"},"foo":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`)
	mustWrite(t, f.notGPT2, append(append(encbin.LittleEndian.AppendUint64(nil, uint64(len(hdr))), hdr...), 0, 0, 0, 0))
	return f
}

// mustFIFO makes a FIFO at path, and its directory.
func mustFIFO(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustSymlink makes a symbolic link at path to to, and its directory.
func mustSymlink(t *testing.T, to, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, path); err != nil {
		t.Fatal(err)
	}
}

// TestBadInputs runs the built binaries over bad inputs of every kind
// (flags, files, checkpoints, tokenizers, data): exit status 2 for a usage error, 1 for a
// runtime error, one line on stderr naming the flag or file and what is
// wrong, and never a panic or a goroutine dump. Under -short (the qemu
// runs) tinygpt runs in-process and kernelbench's rows are skipped.
func TestBadInputs(t *testing.T) {
	f := makeFixtures(t)
	type row struct {
		name   string
		bin    string // "" is tinygpt
		args   []string
		status int
		want   []string // substrings of the stderr line
		after  func(t *testing.T)
		mem    string // the memory available (gpt.MemoryEnv), or "" for the machine's
		quiet  bool   // nothing on stdout: refused before any work
	}
	train := func(args ...string) []string {
		return append([]string{"train", "--checkpoint_dir", f.missing}, args...)
	}
	// unchanged checks that path is still of type mode (a FIFO, a link, a
	// device) and, for a regular file, still size bytes long.
	unchanged := func(path string, mode fs.FileMode, size int64) func(t *testing.T) {
		return func(t *testing.T) {
			st, err := os.Lstat(path)
			if err != nil || st.Mode().Type() != mode || (mode.IsRegular() && st.Size() != size) {
				t.Errorf("%s afterwards: %v, %v; want type %v (size %d)", path, st, err, mode, size)
			}
			if st, err := os.Stat("/dev/null"); err != nil || st.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
				t.Errorf("/dev/null afterwards: %v, %v", st, err)
			}
		}
	}
	goodSize := int64(0)
	if st, err := os.Stat(filepath.Join(f.good, gpt.CheckpointFile)); err == nil {
		goodSize = st.Size()
	}
	configFIFO, configZero := filepath.Join(f.configFIFO, gpt.HFConfigFile), filepath.Join(f.configZero, gpt.HFConfigFile)
	// A checkpoint of f.good converted to bf16, and the file of f.finished.
	converted := filepath.Join(f.dir, "converted")
	if st, _, errs := runCmd("convert", "--checkpoint", f.good, "--weights", "bf16", "--out", converted); st != 0 {
		t.Fatalf("convert: %s", errs)
	}
	finishedFile := filepath.Join(f.finished, gpt.CheckpointFile)
	finishedSize := int64(0)
	if st, err := os.Stat(finishedFile); err == nil {
		finishedSize = st.Size()
	}
	convert := func(args ...string) []string { return append([]string{"convert"}, args...) }
	rows := []row{
		{name: "convert onto its source", args: convert("--checkpoint", f.good, "--weights", "int8", "--out", f.good), status: 2, quiet: true,
			want:  []string{"--out " + f.good + ": " + filepath.Join(f.good, gpt.CheckpointFile) + " is the checkpoint being converted"},
			after: unchanged(filepath.Join(f.good, gpt.CheckpointFile), 0, goodSize)},
		{name: "convert onto its source file", args: convert("--checkpoint", filepath.Join(f.good, gpt.CheckpointFile), "--weights", "bf16", "--out", f.good), status: 2, quiet: true,
			want: []string{"is the checkpoint being converted"}, after: unchanged(filepath.Join(f.good, gpt.CheckpointFile), 0, goodSize)},
		{name: "convert over another checkpoint", args: convert("--checkpoint", f.g.hfDir, "--weights", "int8", "--out", f.finished), status: 2, quiet: true,
			want: []string{finishedFile + " exists; remove it or choose another directory"}, after: unchanged(finishedFile, 0, finishedSize)},
		{name: "convert over a FIFO", args: convert("--checkpoint", f.good, "--weights", "int8", "--out", f.ckFIFODir), status: 2, quiet: true,
			want: []string{filepath.Join(f.ckFIFODir, gpt.CheckpointFile) + " exists"}, after: unchanged(filepath.Join(f.ckFIFODir, gpt.CheckpointFile), fs.ModeNamedPipe, 0)},
		{name: "convert out under a file", args: convert("--checkpoint", f.good, "--weights", "int8", "--out", filepath.Join(f.text, "sub")), status: 1, quiet: true,
			want: []string{"--out: create " + filepath.Join(f.text, "sub") + ": " + f.text + " is a regular file, not a directory"}},
		{name: "convert missing checkpoint", args: convert("--checkpoint", f.missing, "--weights", "int8", "--out", f.missing), status: 1, quiet: true,
			want: []string{f.missing, "no such file"}, after: func(t *testing.T) {
				if _, err := os.Stat(f.missing); err == nil {
					t.Errorf("a refused convert created %s", f.missing)
				}
			}},
		{name: "convert FIFO checkpoint", args: convert("--checkpoint", f.fifo, "--weights", "bf16", "--out", f.missing), status: 1, quiet: true,
			want: []string{f.fifo, "not a regular file"}, after: unchanged(f.fifo, fs.ModeNamedPipe, 0)},
		{name: "convert flipped bit", args: convert("--checkpoint", f.flipped, "--weights", "bf16", "--out", f.missing), status: 1, quiet: true, want: []string{f.flipped, "checksum"}},
		{name: "convert huge config", args: convert("--checkpoint", f.huge, "--weights", "int8", "--out", f.missing), status: 1, quiet: true, want: []string{f.huge, "Config.Width = 1000000000 is above the limit"}},
		{name: "convert bf16 to int8", args: convert("--checkpoint", converted, "--weights", "int8", "--out", f.missing), status: 2, quiet: true,
			want: []string{"--weights int8: " + filepath.Join(converted, gpt.CheckpointFile) + " holds bf16 weights (written by tinygpt convert)"}},
		{name: "sample other weights than converted", args: []string{"sample", "--checkpoint", converted, "--weights", "int8"}, status: 2, quiet: true,
			want: []string{"--weights int8: " + filepath.Join(converted, gpt.CheckpointFile) + " holds bf16 weights", "give --weights bf16 or none"}},
		{name: "eval f32 weights of converted", args: []string{"eval", "--checkpoint", converted, "--data", f.text, "--weights", "f32"}, status: 2, quiet: true,
			want: []string{"--weights f32: ", "holds bf16 weights"}},
		{name: "init from converted", args: train("--init", converted, "--data", f.text), status: 2, quiet: true,
			want: []string{"--init " + filepath.Join(converted, gpt.CheckpointFile) + " holds bf16 weights (written by tinygpt convert), for inference only"}},
		{name: "resume converted", args: []string{"train", "--checkpoint_dir", converted, "--resume"}, status: 1, quiet: true,
			want: []string{"no optimizer state"}},
		{name: "unknown command", args: []string{"fly"}, status: 2, want: []string{`unknown command "fly"`}},
		{name: "unknown flag", args: train("--bogus"), status: 2, want: []string{"-bogus"}},
		{name: "width", args: train("--d_model", "1000000000"), status: 2, want: []string{"--d_model 1000000000 is above the limit of 16384"}},
		{name: "layers", args: train("--n_layers", "100000"), status: 2, want: []string{"--n_layers 100000 is above the limit of 1024"}},
		{name: "batch", args: train("--batch_size", "1000000000"), status: 2, want: []string{"--batch_size 1000000000 is above the limit"}},
		{name: "block", args: train("--block_size", "1000000000"), status: 2, want: []string{"--block_size 1000000000 is above the limit"}},
		{name: "threads 1e6", args: train("--threads", "1000000"), status: 2, want: []string{"--threads 1000000 is above the limit of 1024"}},
		{name: "threads 1e5", args: train("--threads", "100000"), status: 2, want: []string{"--threads 100000"}},
		{name: "max_iters", args: train("--max_iters", "2000000000"), status: 2, want: []string{"--max_iters 2000000000 is above the limit"}},
		{name: "memory", args: train("--d_model", "16384", "--n_layers", "1024"), status: 1, want: []string{"needs about", "available"}},
		{name: "memory for the data", args: train("--data", f.text), mem: "100000", status: 1, want: []string{"reading " + f.text, "needs about", "only 97.7 KiB is available"}},
		{name: "memory for a long word", args: train("--tokenizer", "gpt2", "--tokenizer_dir", f.g.tokDir, "--data", f.longWord), mem: "200000000", status: 1,
			want: []string{f.longWord, "tokenizing 2.0 MiB of text with GPT-2 BPE needs about", "available"},
			after: func(t *testing.T) {
				if _, err := os.Stat(f.missing); err == nil {
					t.Errorf("a refused run created %s", f.missing)
				}
			}},
		{name: "memory for a tokenizer", args: []string{"sample", "--checkpoint", f.g.hfDir, "--prompt", "ab"}, mem: "4194304", status: 1, want: []string{"loading the BPE tokenizer of", "needs about", "available"}},
		{name: "eval memory for a long word", args: []string{"eval", "--checkpoint", f.g.hfDir, "--data", f.longWord}, mem: "200000000", status: 1, want: []string{f.longWord, "tokenizing 2.0 MiB of text with GPT-2 BPE needs about"}},
		{name: "eval memory for the data", args: []string{"eval", "--checkpoint", f.g.hfDir, "--data", f.longWord}, mem: "10000000", status: 1, want: []string{"reading " + f.longWord, "needs about"}},
		{name: "attn memory", args: []string{"attn", "--checkpoint", f.good, "--prompt", "the quick", "--out", f.missing}, mem: "1000", status: 1, want: []string{"needs about", "only 1000 B is available"}},
		{name: "epochs Inf", args: train("--epochs", "Inf"), status: 2, want: []string{"--epochs +Inf must be a finite number"}},
		{name: "epochs NaN", args: train("--epochs", "NaN"), status: 2, want: []string{"--epochs NaN"}},
		{name: "epochs 1e300", args: train("--epochs", "1e300"), status: 2, want: []string{"--epochs 1e+300 means", "more than the limit"}},
		{name: "data wrong magic", args: train("--data", f.magic), status: 1, want: []string{f.magic, "magic number is 20240521, not 20240520"}},
		{name: "data /dev/zero", args: train("--data", "/dev/zero"), status: 1, want: []string{"/dev/zero", "device"}},
		{name: "data FIFO", args: train("--data", f.fifo), status: 1, want: []string{f.fifo, "named pipe"}},
		{name: "data missing", args: train("--data", f.missing), status: 1, want: []string{f.missing, "no such file"}},
		{name: "data directory", args: train("--data", f.dir), status: 1, want: []string{f.dir, "not a regular file (a directory)"}},
		{name: "data link to /dev/zero", args: train("--data", f.zero), status: 1, want: []string{f.zero + ": not a regular file (a character device)"}},
		{name: "sample checkpoint link to /dev/zero", args: []string{"sample", "--checkpoint", f.zero}, status: 1, want: []string{f.zero + ": not a regular file (a character device)"}},
		{name: "sample config.json FIFO", args: []string{"sample", "--checkpoint", f.configFIFO}, status: 1, want: []string{configFIFO + ": not a regular file (a named pipe (FIFO))"},
			after: unchanged(configFIFO, fs.ModeNamedPipe, 0)},
		{name: "sample config.json link to /dev/zero", args: []string{"sample", "--checkpoint", f.configZero}, status: 1, want: []string{configZero + ": not a regular file (a character device)"}},
		{name: "eval config.json FIFO", args: []string{"eval", "--checkpoint", f.configFIFO, "--data", f.g.text}, status: 1, want: []string{configFIFO + ": not a regular file (a named pipe (FIFO))"},
			after: unchanged(configFIFO, fs.ModeNamedPipe, 0)},
		{name: "init config.json FIFO", args: train("--init", f.configFIFO, "--data", f.g.text), status: 1, want: []string{configFIFO + ": not a regular file (a named pipe (FIFO))"},
			after: unchanged(configFIFO, fs.ModeNamedPipe, 0)},
		{name: "sample tokenizer FIFO", args: []string{"sample", "--checkpoint", f.g.noTok, "--tokenizer_dir", f.tokFIFO}, status: 1, want: []string{filepath.Join(f.tokFIFO, "encoder.json") + ": not a regular file (a named pipe (FIFO))"},
			after: unchanged(filepath.Join(f.tokFIFO, "encoder.json"), fs.ModeNamedPipe, 0)},
		{name: "resume loss.csv FIFO", args: []string{"train", "--checkpoint_dir", f.csvFIFO, "--resume", "--max_iters", "20"}, status: 1, want: []string{filepath.Join(f.csvFIFO, lossCSV) + ": not a regular file (a named pipe (FIFO))"},
			after: func(t *testing.T) {
				unchanged(filepath.Join(f.csvFIFO, lossCSV), fs.ModeNamedPipe, 0)(t)
				unchanged(filepath.Join(f.csvFIFO, gpt.CheckpointFile), 0, goodSize)(t)
			}},
		{name: "resume loss.csv link to /dev/zero", args: []string{"train", "--checkpoint_dir", f.csvZero, "--resume", "--max_iters", "20"}, status: 1,
			want:  []string{filepath.Join(f.csvZero, lossCSV) + ": not a regular file (/dev/zero, which it links to, is a character device)"},
			after: unchanged(filepath.Join(f.csvZero, lossCSV), fs.ModeSymlink, 0)},
		{name: "resume loss.csv too large", args: []string{"train", "--checkpoint_dir", f.csvHuge, "--resume", "--max_iters", "20"}, status: 1,
			want: []string{filepath.Join(f.csvHuge, lossCSV) + ": 268435457 bytes, more than the limit of 268435456"},
			after: func(t *testing.T) {
				unchanged(filepath.Join(f.csvHuge, lossCSV), 0, maxLossCSV+1)(t)
				unchanged(filepath.Join(f.csvHuge, gpt.CheckpointFile), 0, goodSize)(t)
			}},
		{name: "train over a FIFO checkpoint", args: tiny(f.ckFIFODir, "--force"), status: 1, want: []string{filepath.Join(f.ckFIFODir, gpt.CheckpointFile) + ": not a regular file (a named pipe (FIFO))"},
			after: unchanged(filepath.Join(f.ckFIFODir, gpt.CheckpointFile), fs.ModeNamedPipe, 0)},
		{name: "train with loss.csv a link to /dev/null", args: tiny(f.nullDir), status: 1, want: []string{filepath.Join(f.nullDir, lossCSV) + ": not a regular file (/dev/null, which it links to, is a character device)"},
			after: unchanged(filepath.Join(f.nullDir, lossCSV), fs.ModeSymlink, 0)},
		{name: "loss.png is a directory", args: tiny(f.lossPNGIsDir, "--max_iters", "3"), status: 1, want: []string{filepath.Join(f.lossPNGIsDir, lossPNG) + ": not a regular file (a directory)"},
			after: func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(f.lossPNGIsDir, gpt.CheckpointFile)); err == nil {
					t.Error("a refused run wrote a checkpoint")
				}
			}},
		{name: "sample NaN logits", args: []string{"sample", "--checkpoint", f.overflow, "-n", "1000"}, status: 1, want: []string{"checkpoint " + f.overflow, "are not finite"}},
		{name: "eval NaN loss", args: []string{"eval", "--checkpoint", f.overflow, "--data", f.synthetic}, status: 1, want: []string{"checkpoint " + f.overflow, "the cross-entropy of batch 0 is NaN, not finite"}},
		{name: "sample huge config", args: []string{"sample", "--checkpoint", f.huge}, status: 1, want: []string{f.huge, "Config.Width = 1000000000 is above the limit"}},
		{name: "attn huge config", args: []string{"attn", "--checkpoint", f.huge, "--prompt", "ab"}, status: 1, want: []string{f.huge, "above the limit"}},
		{name: "sample flipped bit", args: []string{"sample", "--checkpoint", f.flipped}, status: 1, want: []string{f.flipped, "checksum"}},
		{name: "sample FIFO checkpoint", args: []string{"sample", "--checkpoint", f.fifo}, status: 1, want: []string{f.fifo, "not a regular file"}},
		{name: "sample missing checkpoint", args: []string{"sample", "--checkpoint", f.missing}, status: 1, want: []string{f.missing, "no such file"}},
		{name: "sample temperature NaN", args: []string{"sample", "--checkpoint", f.good, "--temperature", "NaN"}, status: 2, want: []string{"--temperature NaN"}},
		{name: "sample temperature Inf", args: []string{"sample", "--checkpoint", f.good, "--temperature", "Inf"}, status: 2, want: []string{"--temperature +Inf"}},
		{name: "sample prompt", args: []string{"sample", "--checkpoint", f.good, "--prompt", "ZZ"}, status: 2, want: []string{"--prompt", "'Z'"}},
		{name: "attn prompt", args: []string{"attn", "--checkpoint", f.good, "--prompt", "ZZ", "--out", f.missing}, status: 2, want: []string{"--prompt", "'Z'"}},
		{name: "sample negative n", args: []string{"sample", "--checkpoint", f.good, "-n", "-1"}, status: 2, want: []string{"-n -1"}},
		{name: "resume huge config", args: []string{"train", "--checkpoint_dir", f.hugeDir, "--resume"}, status: 1, want: []string{f.hugeDir, "Config.Width = 1000000000 is above the limit"}},
		{name: "train over a huge config", args: []string{"train", "--checkpoint_dir", f.hugeDir}, status: 1, want: []string{f.hugeDir, "already holds an unreadable checkpoint"}},
		{name: "resume no checkpoint", args: []string{"train", "--checkpoint_dir", f.missing, "--resume"}, status: 1, want: []string{"--resume: no checkpoint to resume in " + f.missing},
			after: func(t *testing.T) {
				if _, err := os.Stat(f.missing); err == nil {
					t.Errorf("--resume without a checkpoint created %s", f.missing)
				}
			}},
		{name: "resume finished run", args: []string{"train", "--checkpoint_dir", f.finished, "--resume"}, status: 2, want: []string{"is finished (step 10 of 10)", "--max_iters"}},
		{name: "resume behind the checkpoint", args: []string{"train", "--checkpoint_dir", f.finished, "--resume", "--epochs", "0.001"}, status: 2, want: []string{"--epochs 0.001 (", "steps): the checkpoint is at step 10 already"}},
		{name: "resume max_iters behind", args: []string{"train", "--checkpoint_dir", f.finished, "--resume", "--max_iters", "5"}, status: 2, want: []string{"--max_iters 5: the checkpoint is at step 10"}},
		{name: "resume other data", args: []string{"train", "--checkpoint_dir", f.good, "--resume", "--data", f.text}, status: 2, want: []string{"--data " + f.text + " is not the file the checkpoint was trained on"}},
		{name: "train over a checkpoint", args: tiny(f.good), status: 1, want: []string{f.good, "already holds a checkpoint at step 10"}},
		{name: "loss.png links into a missing directory", args: tiny(f.lossPNGDir, "--max_iters", "3"), status: 1, quiet: true,
			want: []string{"write " + filepath.Join(f.lossPNGDir, lossPNG) + ": cannot create a file in " + filepath.Join(f.lossPNGDir, "gone") + " (for " + filepath.Join(f.lossPNGDir, "gone", lossPNG) + ", which it links to): no such file or directory"},
			after: func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(f.lossPNGDir, gpt.CheckpointFile)); err == nil {
					t.Error("a refused run wrote a checkpoint")
				}
			}},
		{name: "checkpoint links into a missing directory", args: []string{"train", "--max_iters", "600", "--eval_interval", "200", "--checkpoint_dir", f.danglingDir}, status: 1, quiet: true,
			want: []string{"write " + filepath.Join(f.danglingDir, gpt.CheckpointFile) + ": cannot create a file in " + filepath.Dir(f.danglingTarget) + " (for " + f.danglingTarget + ", which it links to): no such file or directory"},
			after: func(t *testing.T) {
				if st, err := os.Lstat(filepath.Join(f.danglingDir, gpt.CheckpointFile)); err != nil || st.Mode().Type() != fs.ModeSymlink {
					t.Errorf("the link afterwards: %v, %v", st, err)
				}
				if ents, _ := os.ReadDir(f.danglingDir); len(ents) != 1 {
					t.Errorf("%d entries in %s after a refused run, want the link alone", len(ents), f.danglingDir)
				}
			}},
		{name: "checkpoint links through a link into a missing directory", args: tiny(f.relDanglingDir), status: 1, quiet: true,
			want: []string{"write " + filepath.Join(f.relDanglingDir, gpt.CheckpointFile) + ": cannot create a file in " + filepath.Dir(f.danglingTarget) + " (for " + f.danglingTarget + ", which it links to)"}},
		{name: "checkpoint_dir empty", args: []string{"train", "--checkpoint_dir", ""}, status: 2, want: []string{"--checkpoint_dir is empty"}},
		{name: "checkpoint_dir under a file", args: []string{"train", "--checkpoint_dir", filepath.Join(f.text, "sub")}, status: 1, quiet: true,
			want: []string{"--checkpoint_dir: create " + filepath.Join(f.text, "sub") + ": " + f.text + " is a regular file, not a directory"}},
		{name: "sample checkpoint.safetensors is a directory", args: []string{"sample", "--checkpoint", f.ckIsDir}, status: 1, want: []string{filepath.Join(f.ckIsDir, gpt.CheckpointFile) + ": not a regular file (a directory)"}},
		{name: "sample model.safetensors is a directory", args: []string{"sample", "--checkpoint", f.hfIsDir}, status: 1, want: []string{filepath.Join(f.hfIsDir, gpt.HFFile) + ": not a regular file (a directory)"}},
		{name: "eval model.safetensors is a directory", args: []string{"eval", "--checkpoint", f.hfIsDir, "--data", f.text}, status: 1, want: []string{filepath.Join(f.hfIsDir, gpt.HFFile) + ": not a regular file (a directory)"}},
		{name: "attn checkpoint.safetensors is a directory", args: []string{"attn", "--checkpoint", f.ckIsDir, "--prompt", "ab", "--out", f.missing}, status: 1, want: []string{filepath.Join(f.ckIsDir, gpt.CheckpointFile) + ": not a regular file (a directory)"}},
		{name: "init model.safetensors is a directory", args: train("--init", f.hfIsDir, "--data", f.text), status: 1, want: []string{filepath.Join(f.hfIsDir, gpt.HFFile) + ": not a regular file (a directory)"}},
		{name: "resume checkpoint.safetensors is a directory", args: []string{"train", "--checkpoint_dir", f.ckIsDir, "--resume"}, status: 1, want: []string{filepath.Join(f.ckIsDir, gpt.CheckpointFile) + ": not a regular file (a directory)"}},
		{name: "sample GPT-2 without tokenizer", args: []string{"sample", "--checkpoint", f.g.noTok}, status: 1, want: []string{"no tokenizer for " + filepath.Join(f.g.noTok, gpt.HFFile), "--tokenizer_dir"}},
		{name: "sample empty tokenizer_dir", args: []string{"sample", "--checkpoint", f.g.noTok, "--tokenizer_dir", f.dir}, status: 1, want: []string{"--tokenizer_dir " + f.dir + " holds no tokenizer"}},
		{name: "sample tokenizer of another size", args: []string{"sample", "--checkpoint", f.g.hfDir, "--tokenizer_dir", f.otherTok}, status: 1, want: []string{"has 256 tokens", "vocabulary of 272"}},
		{name: "sample llm.c decoder with a prompt", args: []string{"sample", "--checkpoint", f.g.llmcOnly, "--prompt", "hello"}, status: 1, want: []string{"--prompt needs a tokenizer that encodes", llmcTokenizer}},
		{name: "sample not a model", args: []string{"sample", "--checkpoint", f.text}, status: 1, want: []string{f.text, "safetensors"}},
		{name: "sample not GPT-2's layout", args: []string{"sample", "--checkpoint", f.notGPT2}, status: 1, want: []string{f.notGPT2, `tensor "foo" is not part of GPT-2's layout`}},
		// The tokenizer is read while the model loads; the model's error
		// is the one reported.
		{name: "sample not GPT-2's layout, tokenizer FIFO", args: []string{"sample", "--checkpoint", f.notGPT2, "--tokenizer_dir", f.tokFIFO}, status: 1, want: []string{f.notGPT2, `tensor "foo" is not part of GPT-2's layout`},
			after: unchanged(filepath.Join(f.tokFIFO, "encoder.json"), fs.ModeNamedPipe, 0)},
		{name: "sample directory without a model", args: []string{"sample", "--checkpoint", f.g.tokDir}, status: 1, want: []string{f.g.tokDir + " holds neither checkpoint.safetensors"}},
		{name: "sample top_p 0", args: []string{"sample", "--checkpoint", f.good, "--top_p", "0"}, status: 2, want: []string{"--top_p 0 must be in (0, 1]"}},
		{name: "sample top_p NaN", args: []string{"sample", "--checkpoint", f.good, "--top_p", "NaN"}, status: 2, want: []string{"--top_p NaN"}},
		{name: "sample tokenizer_dir for characters", args: []string{"sample", "--checkpoint", f.good, "--tokenizer_dir", f.g.tokDir}, status: 2, want: []string{"--tokenizer_dir", "trained on characters"}},
		{name: "eval block size", args: []string{"eval", "--checkpoint", f.g.hfDir, "--data", f.g.text, "--block_size", "64"}, status: 2, want: []string{"--block_size 64 is above the model's block size of 32"}},
		{name: "eval no data", args: []string{"eval", "--checkpoint", f.good}, status: 2, want: []string{"--data is missing"}},
		{name: "eval weights fp16", args: []string{"eval", "--checkpoint", f.good, "--data", f.text, "--weights", "fp16"}, status: 2, want: []string{`--weights "fp16" must be f32, bf16 or int8`}},
		{name: "eval weights spaced", args: []string{"eval", "--checkpoint", f.missing, "--data", f.text, "--weights", " bf16"}, status: 2, want: []string{`--weights " bf16" must be f32, bf16 or int8`}},
		{name: "sample weights BF16", args: []string{"sample", "--checkpoint", f.good, "--weights", "BF16"}, status: 2, want: []string{`--weights "BF16" must be f32, bf16 or int8`}},
		{name: "sample weights int4", args: []string{"sample", "--checkpoint", f.missing, "--weights", "int4"}, status: 2, want: []string{`--weights "int4" must be f32, bf16 or int8`}},
		{name: "eval batch size", args: []string{"eval", "--checkpoint", f.good, "--data", f.text, "--batch_size", "0"}, status: 2, want: []string{"--batch_size 0 must be in [1, 65536]"}},
		{name: "eval too many batches", args: []string{"eval", "--checkpoint", f.g.hfDir, "--data", f.g.text, "--batches", "100000"}, status: 1, want: []string{f.g.text, "not --batches 100000"}},
		{name: "eval file too short", args: []string{"eval", "--checkpoint", f.g.hfDir, "--data", f.g.text, "--batch_size", "1000"}, status: 1, want: []string{f.g.text, "too few for one batch of 1000×32"}},
		{name: "eval character outside", args: []string{"eval", "--checkpoint", f.good, "--data", f.g.text}, status: 1, want: []string{f.g.text, "not in the vocabulary"}},
		{name: "eval wrong magic", args: []string{"eval", "--checkpoint", f.g.hfDir, "--data", f.magic}, status: 1, want: []string{f.magic, "magic number"}},
		{name: "eval GPT-2 without tokenizer", args: []string{"eval", "--checkpoint", f.g.noTok, "--data", f.g.text}, status: 1, want: []string{"no tokenizer for"}},
		{name: "init block size", args: train("--init", f.g.hfDir, "--data", f.g.text, "--block_size", "64"), status: 2, want: []string{"--block_size 64 is above the --init model's block size of 32"},
			after: func(t *testing.T) {
				if _, err := os.Stat(f.missing); err == nil {
					t.Errorf("a refused --init created %s", f.missing)
				}
			}},
		{name: "init width", args: train("--init", f.g.hfDir, "--data", f.g.text, "--d_model", "32"), status: 2, want: []string{"--d_model 32 differs from the --init model's 16"}},
		{name: "init without data", args: train("--init", f.g.hfDir), status: 2, want: []string{"--data is missing"}},
		{name: "init and resume", args: train("--init", f.g.hfDir, "--data", f.g.text, "--resume"), status: 2, want: []string{"--init", "--resume", "give one"}},
		{name: "init and tokenizer", args: train("--init", f.g.hfDir, "--data", f.g.text, "--tokenizer", "gpt2"), status: 2, want: []string{"--tokenizer is for new models"}},
		{name: "init and tie_embeddings", args: train("--init", f.g.hfDir, "--data", f.g.text, "--tie_embeddings"), status: 2, want: []string{"--tie_embeddings is for new models"}},
		{name: "init missing", args: train("--init", f.missing, "--data", f.g.text), status: 1, want: []string{f.missing, "no such file"}},
		{name: "init GPT-2 without tokenizer", args: train("--init", f.g.noTok, "--data", f.g.text), status: 1, want: []string{"no tokenizer for"}},
		{name: "init llm.c decoder on text", args: train("--init", f.g.llmcOnly, "--data", f.g.text), status: 1, want: []string{f.g.text, "text needs a tokenizer that encodes"}},
		{name: "init not a model", args: train("--init", f.text, "--data", f.g.text), status: 1, want: []string{f.text, "safetensors"}},
		{name: "tokenizer unknown", args: train("--tokenizer", "sentencepiece"), status: 2, want: []string{`--tokenizer "sentencepiece": want chars or gpt2`}},
		{name: "tokenizer gpt2 without dir", args: train("--tokenizer", "gpt2", "--data", f.g.text), status: 2, want: []string{"--tokenizer gpt2 needs --tokenizer_dir"}},
		{name: "tokenizer_dir alone", args: train("--tokenizer_dir", f.g.tokDir, "--data", f.g.text), status: 2, want: []string{"--tokenizer_dir is for --tokenizer gpt2 or --init"}},
		{name: "tokenizer gpt2 empty dir", args: train("--tokenizer", "gpt2", "--tokenizer_dir", f.dir, "--data", f.g.text), status: 1, want: []string{"--tokenizer_dir " + f.dir + " holds no tokenizer"}},
		{name: "resume with tokenizer_dir", args: []string{"train", "--checkpoint_dir", f.good, "--resume", "--tokenizer_dir", f.g.tokDir}, status: 2, want: []string{"a resumed run keeps its vocabulary"}},
		{name: "kernelbench NaN", bin: "kernelbench", args: []string{"-kernels", "dot", "-short", "-compare", f.nan}, status: 1, want: []string{f.nan + ":2:", "NaN is not a positive finite number"}},
		{name: "kernelbench -o missing dir", bin: "kernelbench", args: []string{"-kernels", "dot", "-o", filepath.Join(f.missing, "x.txt")}, status: 1, want: []string{"-o " + filepath.Join(f.missing, "x.txt"), "no directory"}},
		{name: "kernelbench -compare FIFO", bin: "kernelbench", args: []string{"-kernels", "dot", "-compare", f.fifo}, status: 1, want: []string{f.fifo, "not a regular file"}},
		{name: "kernelbench -o FIFO", bin: "kernelbench", args: []string{"-kernels", "dot", "-o", f.fifo}, status: 1, want: []string{"-o " + f.fifo + ": not a regular file (a named pipe (FIFO))"},
			after: unchanged(f.fifo, fs.ModeNamedPipe, 0)},
		{name: "kernelbench -o link to /dev/null", bin: "kernelbench", args: []string{"-kernels", "dot", "-o", filepath.Join(f.nullDir, lossCSV)}, status: 1,
			want:  []string{"-o " + filepath.Join(f.nullDir, lossCSV) + ": not a regular file (/dev/null, which it links to, is a character device)"},
			after: unchanged(filepath.Join(f.nullDir, lossCSV), fs.ModeSymlink, 0)},
		{name: "kernelbench bad flag", bin: "kernelbench", args: []string{"-nosuchflag"}, status: 2, want: []string{"-nosuchflag"}},
		{name: "kernelbench -count", bin: "kernelbench", args: []string{"-count", "0"}, status: 2, want: []string{"-count 0"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if r.mem != "" {
				t.Setenv(gpt.MemoryEnv, r.mem)
			}
			var st int
			var out, errs string
			switch {
			case !testing.Short():
				bin := r.bin
				if bin == "" {
					bin = "tinygpt"
				}
				st, out, errs = runBinary(t, bin, r.args...)
			case r.bin == "":
				done := make(chan struct{})
				go func() {
					defer close(done)
					st, out, errs = runCmd(r.args...)
				}()
				select {
				case <-done:
				case <-time.After(hang):
					t.Fatalf("%q still running after %v (blocked?)", r.args, hang)
				}
			default:
				t.Skip("kernelbench's binary is not built under -short")
			}
			if st != r.status || strings.Count(errs, "\n") != 1 {
				t.Errorf("status %d, stderr %q; want status %d and one line", st, errs, r.status)
			}
			for _, w := range r.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if all := out + errs; strings.Contains(all, "goroutine ") || strings.Contains(all, "panic:") {
				t.Errorf("a panic:\n%s", all)
			}
			if r.quiet && out != "" {
				t.Errorf("stdout %q; want nothing (refused before any work)", out)
			}
			if r.after != nil {
				r.after(t)
			}
		})
	}
}

// TestBadEnvISA checks that both commands refuse to run on another
// implementation than SIMDGPT_ISA asks for: exit status 2, the library's
// one warning line and the command's one line naming the variable, and
// no panic. (The library itself only warns and falls back.)
func TestBadEnvISA(t *testing.T) {
	if testing.Short() {
		t.Skip("the binaries are not built under -short")
	}
	for _, bin := range []string{"tinygpt", "kernelbench"} {
		cmd := exec.Command(binary(t, bin), "-h")
		cmd.Env = append(os.Environ(), "SIMDGPT_ISA= sse9 ")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%s with SIMDGPT_ISA=sse9: %v, want exit status 2", bin, err)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], bin+": SIMDGPT_ISA=sse9: no such implementation") || strings.Contains(errb.String(), "panic") {
			t.Errorf("%s stderr %q, want the library's warning and one line naming SIMDGPT_ISA=sse9", bin, errb.String())
		}
	}
}
