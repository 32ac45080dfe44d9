package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/gpt"
)

// TestSampleNumSamples checks --num_samples: N samples, each followed by
// the separator line, each starting with the prompt and holding -n
// tokens, sample i equal to the lone sample of --seed S+i (sampled and
// greedy, float32 and int8 weights); and that a number of samples the
// memory cannot hold is a usage error naming how many fit.
func TestSampleNumSamples(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	if st, _, errs := runCmd(tiny(dir, "--max_iters", "10", "--threads", "1")...); st != 0 {
		t.Fatalf("train: %s", errs)
	}
	sample := func(args ...string) string {
		t.Helper()
		st, out, errs := runCmd(append([]string{"sample", "--checkpoint", dir, "--prompt", "abc", "-n", "40"}, args...)...)
		if st != 0 {
			t.Fatalf("sample %q: status %d %q", args, st, errs)
		}
		return out
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"top-k", []string{"--top_k", "5"}},
		{"top-p", []string{"--temperature", "0.9", "--top_p", "0.9"}},
		{"greedy", []string{"--temperature", "0"}},
		{"int8", []string{"--weights", "int8", "--temperature", "1.2"}},
	} {
		const n = 3
		out := sample(append([]string{"--num_samples", fmt.Sprint(n), "--seed", "5"}, c.args...)...)
		parts := strings.Split(out, sampleSeparator+"\n")
		if len(parts) != n+1 || parts[n] != "" {
			t.Errorf("%s: %d parts split by the separator, want %d samples and nothing after the last:\n%s", c.name, len(parts), n, out)
			continue
		}
		distinct := map[string]bool{}
		for i, p := range parts[:n] {
			if !strings.HasPrefix(p, "abc") || utf8.RuneCountInString(p) != 3+40+1 {
				t.Errorf("%s: sample %d is %q, want abc, 40 characters and a newline", c.name, i, p)
			}
			alone := sample(append([]string{"--seed", fmt.Sprint(5 + i)}, c.args...)...)
			if p != alone {
				t.Errorf("%s: sample %d of %d is\n%q\nalone with seed %d\n%q", c.name, i, n, p, 5+i, alone)
			}
			distinct[p] = true
		}
		if want := map[bool]int{true: 1, false: n}[c.name == "greedy"]; len(distinct) != want {
			t.Errorf("%s: %d distinct samples of %d, want %d", c.name, len(distinct), n, want)
		}
	}

	// Memory for one sample and a little more: 64 do not fit.
	ck, err := gpt.Load(filepath.Join(dir, gpt.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	one := gpt.BatchSampleBytesWeights(ck.Model.Config, gpt.WeightsF32, 1)
	two := gpt.BatchSampleBytesWeights(ck.Model.Config, gpt.WeightsF32, 2)
	t.Setenv(gpt.MemoryEnv, fmt.Sprint(two+(two-one)/2))
	st, out, errs := runCmd("sample", "--checkpoint", dir, "--num_samples", "64")
	if st != 2 || out != "" || !strings.Contains(errs, "--num_samples 64 needs about") || !strings.Contains(errs, "at most 2 fit") {
		t.Errorf("64 samples in the memory of 2.5: status %d, stdout %q, stderr %q; want 2, nothing, and one line naming 2", st, out, errs)
	}
	if st, _, errs := runCmd("sample", "--checkpoint", dir, "--num_samples", "2", "-n", "5"); st != 0 {
		t.Errorf("2 samples in the memory of 2.5: status %d %q", st, errs)
	}
}
