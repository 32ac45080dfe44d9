package main

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt"
)

// TestWeightsFlag samples and evaluates GPT-2 weights with --weights:
// the sample is what the library's sampler draws from the model converted
// by Model.WithWeights, and the eval line names the format and gives a
// loss near float32's.
func TestWeightsFlag(t *testing.T) {
	f := newGPT2Fixture(t)
	const prompt = "hello world"
	loss := func(out string) float64 {
		t.Helper()
		m := regexp.MustCompile(`cross-entropy ([0-9.]+) nats`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no loss in %q", out)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	st, out, errs := runCmd("eval", "--checkpoint", f.hfDir, "--data", f.text)
	if st != 0 {
		t.Fatalf("eval: status %d %q", st, errs)
	}
	f32 := loss(out)
	for _, c := range []struct {
		w     gpt.Weights
		bound float64 // relative change of the loss
	}{
		{gpt.WeightsBF16, 0.01}, {gpt.WeightsInt8, 0.02},
	} {
		low, err := f.m.WithWeights(c.w)
		if err != nil {
			t.Fatal(err)
		}
		st, out, errs := runCmd("sample", "--checkpoint", f.hfDir, "--prompt", prompt, "-n", "30", "--temperature", "0", "--weights", c.w.String())
		if want := expectedSample(t, low, prompt, 30, gpt.SampleOptions{}, 1); st != 0 || out != want {
			t.Errorf("sample --weights %v: status %d %q\n%q\nwant\n%q", c.w, st, errs, out, want)
		}
		st, out, errs = runCmd("eval", "--checkpoint", filepath.Join(f.hfDir, gpt.HFFile), "--data", f.text, "--weights", c.w.String())
		if st != 0 || !strings.Contains(out, fmt.Sprintf(" with %v weights\n", c.w)) {
			t.Fatalf("eval --weights %v: status %d %q %q", c.w, st, out, errs)
		}
		if l := loss(out); l == f32 || math.Abs(l-f32) > c.bound*f32 {
			t.Errorf("eval --weights %v: loss %v, float32 %v: want a change in (0, %g]", c.w, l, f32, c.bound)
		}
	}
}
