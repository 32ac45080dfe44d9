package gpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

// torchLogitsScript is bench/torch/gpt2_logits.py, which computes GPT-2's
// logits with PyTorch from a checkpoint file (written from GPT-2's
// definition; it shares no code with this package or its tests).
var torchLogitsScript = filepath.Join("..", "bench", "torch", "gpt2_logits.py")

// torchPython is /usr/bin/python3 (Debian's python3-torch installs there)
// when it exists, else python3 from PATH.
func torchPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// gpt2TorchTol is the agreement required between any two of our logits,
// PyTorch's and the float64 reference's: max |Δ| at most this fraction of
// the largest |logit| of the reference (both sides compute in float32, in
// other orders, and our GELU is a table of tanh: about 1e-6 off).
const gpt2TorchTol = 1e-4

// TestGPT2TorchOracle writes the test GPT-2 in every format LoadGPT2 reads
// (gpt2Files: safetensors F32, with the transformer. prefix and mask
// buffers, F16 and BF16; llm.c versions 3 and 5), loads each, and checks
// three-way agreement over two sequences between our logits (Forward
// without targets), PyTorch's from bench/torch/gpt2_logits.py on the same
// file, and the float64 reference of the weights the file was written
// from: every pair within gpt2TorchTol of the largest |logit|. It logs the
// measured differences. It is skipped when python3 cannot import torch (CI
// installs python3-torch, so it runs there), and under -short: CI runs
// -short under qemu-user, whose fork can deadlock in the child, and runs
// this test in its default run.
func TestGPT2TorchOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: tests that start python run without -short")
	}
	if _, err := os.Stat(torchLogitsScript); err != nil {
		t.Fatal(err)
	}
	python := torchPython()
	if _, err := exec.LookPath(python); err != nil {
		t.Skipf("no %s: apt-get install python3-torch to run this test", python)
	}
	files := gpt2Files()
	dir := t.TempDir()
	paths := make([]string, len(files))
	for i, f := range files {
		var err error
		if paths[i], err = writeFiles(dir, f.file, map[string][]byte{f.file: f.data, HFConfigFile: f.config}); err != nil {
			t.Fatal(err)
		}
	}
	s := testGPT2
	const seqs = 2
	tok := randTokens(rng.New(7), seqs*s.T, s.V)
	tokArgs := make([]string, 0, 2*seqs)
	for b := 0; b < seqs; b++ {
		var sb strings.Builder
		for i, x := range tok[b*s.T : (b+1)*s.T] {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(int(x)))
		}
		tokArgs = append(tokArgs, "--tokens", sb.String())
	}

	// One run of the script for every file (torch's import is most of it).
	out := filepath.Join(dir, "torch_logits.f32")
	args := append(append([]string{torchLogitsScript}, paths...), tokArgs...)
	args = append(args, "--out", out)
	var stderr bytes.Buffer
	cmd := exec.Command(python, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			t.Skipf("%s", strings.TrimSpace(stderr.String()))
		}
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	per := seqs * s.T * s.V
	if len(raw) != 4*len(files)*per {
		t.Fatalf("the script wrote %d bytes of logits, want %d (%d files × %d sequences × %d×%d float32)",
			len(raw), 4*len(files)*per, len(files), seqs, s.T, s.V)
	}
	torchAll := make([]float32, len(files)*per)
	for i := range torchAll {
		torchAll[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}

	for i, f := range files {
		m, err := LoadGPT2(paths[i])
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		m.Forward(tok, nil, seqs, s.T)
		ours := m.Logits()
		torch := torchAll[i*per : (i+1)*per]
		var dOT, dTR, dOR, scale float64 // ours–torch, torch–reference, ours–reference; max |reference logit|
		for b := 0; b < seqs; b++ {
			ref := f.params.refLogits(tok[b*s.T : (b+1)*s.T])
			scale = math.Max(scale, maxAbs(ref))
			for p, row := range ref {
				for v, r := range row {
					k := (b*s.T+p)*s.V + v
					o, tt := float64(ours[k]), float64(torch[k])
					if math.IsNaN(o) || math.IsNaN(tt) {
						t.Fatalf("%s: sequence %d position %d logit %d: ours %g, PyTorch %g", f.name, b, p, v, o, tt)
					}
					dOT = math.Max(dOT, math.Abs(o-tt))
					dTR = math.Max(dTR, math.Abs(tt-r))
					dOR = math.Max(dOR, math.Abs(o-r))
				}
			}
		}
		tol := gpt2TorchTol * scale
		t.Logf("%s: max |logit| %.3g; max |Δ| ours–PyTorch %.2g (%.2g of it), PyTorch–float64 %.2g (%.2g), ours–float64 %.2g (%.2g); tolerance %.2g (%g)",
			f.name, scale, dOT, dOT/scale, dTR, dTR/scale, dOR, dOR/scale, tol, gpt2TorchTol)
		for _, c := range []struct {
			pair string
			d    float64
		}{{"ours and PyTorch", dOT}, {"PyTorch and the float64 reference", dTR}, {"ours and the float64 reference", dOR}} {
			if !(c.d <= tol) {
				t.Errorf("%s: %s differ by up to %g, tolerance %g (%g of the largest |logit| %g)", f.name, c.pair, c.d, tol, gpt2TorchTol, scale)
			}
		}
	}
}
