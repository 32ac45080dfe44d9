package gpt

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/kernelstest"
)

func smallRun(t *testing.T, heads int, tie bool) (*Model, *data.Dataset, TrainConfig) {
	t.Helper()
	d, err := data.FromText(data.Synthetic(20000, 1), 16)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Vocab: d.VocabSize, BlockSize: 16, Layers: 2, Heads: heads, Width: 32, TieEmbeddings: tie}, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m, d, DefaultTrainConfig(4, 40, 3e-3, 3)
}

// TestResumeIsExact checks that a run saved and resumed at step 5 takes
// the same steps as an uninterrupted one, with and without tied
// embeddings.
func TestResumeIsExact(t *testing.T) {
	for _, tie := range []bool{false, true} {
		t.Run(fmt.Sprintf("tie=%v", tie), func(t *testing.T) { testResumeIsExact(t, tie) })
	}
}

func testResumeIsExact(t *testing.T, tie bool) {
	const total, cut = 12, 5
	m, d, cfg := smallRun(t, 2, tie)
	tr, err := NewTrainer(m, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for i := 0; i < total; i++ {
		want = append(want, tr.TrainStep())
	}

	m2, _, _ := smallRun(t, 2, tie)
	tr2, _ := NewTrainer(m2, d, cfg)
	var got []float64
	for i := 0; i < cut; i++ {
		got = append(got, tr2.TrainStep())
	}
	path := filepath.Join(t.TempDir(), CheckpointFile)
	if err := tr2.Save(path, d.Vocab); err != nil {
		t.Fatal(err)
	}
	// Keep stepping the old trainer: the checkpoint must not share memory
	// with it.
	tr2.TrainStep()
	ck, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Step != cut || ck.Vocab.String() != d.Vocab.String() || ck.Model.Config != m.Config {
		t.Fatalf("checkpoint step %d vocab %q config %+v", ck.Step, ck.Vocab, ck.Model.Config)
	}
	tr3, err := ck.Resume(d)
	if err != nil {
		t.Fatal(err)
	}
	for i := cut; i < total; i++ {
		got = append(got, tr3.TrainStep())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step %d: resumed loss %v, uninterrupted %v\nresumed:       %v\nuninterrupted: %v", i, got[i], want[i], got, want)
		}
	}
	if tr3.Step() != total {
		t.Fatalf("resumed trainer at step %d, want %d", tr3.Step(), total)
	}
}

func TestCheckpointDamage(t *testing.T) {
	m, d, cfg := smallRun(t, 1, false)
	tr, _ := NewTrainer(m, d, cfg)
	tr.TrainStep()
	dir := t.TempDir()
	path := filepath.Join(dir, CheckpointFile)
	if err := tr.Save(path, d.Vocab); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %d entries after Save, want only the checkpoint (no temporary file)", len(ents))
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", good[:len(good)/2], "truncated"},
		{"empty", nil, "too short"},
		{"bit flip in weights", func() []byte { b := append([]byte(nil), good...); b[len(b)-100] ^= 1; return b }(), "checksum"},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, c.b, 0o644)
		ck, err := Load(p)
		if err == nil || ck != nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Load = %v, %v; want nil and an error naming the file and containing %q", c.name, ck, err, c.want)
		}
	}
}

func TestSamplerMatchesForward(t *testing.T) {
	kernelstest.ForEach(t, testSamplerMatchesForward)
}

func testSamplerMatchesForward(t *testing.T, k *kernels.Impl) {
	for _, c := range []struct {
		heads int
		tie   bool
	}{{1, false}, {4, false}, {4, true}} {
		cfg := Config{Vocab: 11, BlockSize: 12, Layers: 2, Heads: c.heads, Width: 16, TieEmbeddings: c.tie}
		m, _ := New(cfg, 5, WithImpl(k))
		r := rng.New(1)
		for i := range m.Params {
			m.Params[i] += float32(r.Normal() * 0.1)
		}
		toks := randTokens(r, cfg.BlockSize, cfg.Vocab)
		m.Forward(toks, nil, 1, cfg.BlockSize)
		full := m.Logits()
		s := m.NewSampler()
		// Whole prompt at once, and token by token through Generate's path.
		for _, n := range []int{1, 5, cfg.BlockSize} {
			got := s.Logits(toks[:n])
			want := full[(n-1)*cfg.Vocab : n*cfg.Vocab]
			for j := range got {
				if math.Abs(float64(got[j]-want[j])) > 1e-4 {
					t.Fatalf("%+v, prefix %d: cached logit %d = %g, forward %g", cfg, n, j, got[j], want[j])
				}
			}
		}
		s.Logits(toks[:1])
		for n := 2; n <= cfg.BlockSize; n++ {
			s.feed(toks[n-1 : n])
			want := full[(n-1)*cfg.Vocab : n*cfg.Vocab]
			for j := range want {
				if math.Abs(float64(s.logits[j]-want[j])) > 1e-4 {
					t.Fatalf("%+v, token by token at %d: logit %d = %g, forward %g", cfg, n, j, s.logits[j], want[j])
				}
			}
		}
	}
}

func TestGenerate(t *testing.T) {
	kernelstest.ForEach(t, testGenerate)
}

func testGenerate(t *testing.T, k *kernels.Impl) {
	cfg := Config{Vocab: 9, BlockSize: 8, Layers: 1, Heads: 2, Width: 8}
	m, _ := New(cfg, 5, WithImpl(k))
	r := rng.New(1)
	for i := range m.Params {
		m.Params[i] += float32(r.Normal() * 0.5)
	}
	gen := func(temp float64, k int, seed uint64) []int32 {
		var out []int32
		err := m.NewSampler().Generate([]int32{1, 2}, 30, temp, k, rng.New(seed), func(tok int32) error { out = append(out, tok); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := gen(1, 0, 7), gen(1, 0, 7)
	if len(a) != 30 || !equalI32(a, b) {
		t.Fatalf("same seed: %v and %v", a, b)
	}
	if equalI32(a, gen(1, 0, 8)) {
		t.Fatal("seeds 7 and 8 sampled the same 30 tokens")
	}
	greedy := gen(0, 0, 1)
	if !equalI32(greedy, gen(1, 1, 99)) {
		t.Fatal("top_k 1 differs from temperature 0 (both must pick the most likely token)")
	}
	// The first greedy token is the argmax of a full forward over the prompt.
	m.Forward([]int32{1, 2}, nil, 1, 2)
	lg := m.Logits()[cfg.Vocab:]
	best := 0
	for j := range lg {
		if lg[j] > lg[best] {
			best = j
		}
	}
	if greedy[0] != int32(best) {
		t.Fatalf("first greedy token %d, argmax of the forward logits %d", greedy[0], best)
	}
	// top_k 3 at a high temperature: every token is among the 3 most likely
	// of the logits it was drawn from (still in the sampler when emit runs).
	sm := m.NewSampler()
	seen := map[int32]bool{}
	err := sm.Generate([]int32{3}, 200, 5, 3, rng.New(4), func(tok int32) error {
		higher := 0
		for _, l := range sm.logits {
			if l > sm.logits[tok] {
				higher++
			}
		}
		if higher >= 3 {
			t.Fatalf("top_k 3 drew token %d with %d more likely tokens", tok, higher)
		}
		seen[tok] = true
		return nil
	})
	if err != nil || len(seen) < 3 {
		t.Fatalf("top_k 3: err %v, %d distinct tokens in 200 draws", err, len(seen))
	}
	if err := m.NewSampler().Generate(nil, 3, 1, 0, r, func(int32) error { return nil }); err == nil {
		t.Fatal("empty prompt: no error")
	}
}

func equalI32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConfigJSON pins the checkpoint's config metadata: tie_embeddings
// appears only when set, so untied checkpoints keep their bytes.
func TestConfigJSON(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Vocab: 5, BlockSize: 3, Layers: 2, Width: 4}, `{"vocab":5,"block_size":3,"layers":2,"heads":1,"width":4}`},
		{Config{Vocab: 5, BlockSize: 3, Layers: 2, Heads: 2, Width: 4, TieEmbeddings: true}, `{"vocab":5,"block_size":3,"layers":2,"heads":2,"width":4,"tie_embeddings":true}`},
	} {
		if got := c.cfg.jsonString(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.cfg, got, c.want)
		}
	}
}

// TestSamplerLogitsBadTokens: a prompt that is empty, longer than the
// block or holds a token outside the vocabulary panics with a message
// naming Logits and the argument, never an index error.
func TestSamplerLogitsBadTokens(t *testing.T) {
	m, err := New(Config{Vocab: 7, BlockSize: 4, Layers: 1, Heads: 1, Width: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSampler()
	for _, c := range []struct {
		toks []int32
		want string
	}{
		{nil, "len(toks)=0"},
		{[]int32{1, 2, 3, 4, 5}, "len(toks)=5"},
		{[]int32{1, 7}, "toks[1]=7"},
		{[]int32{-1}, "toks[0]=-1"},
	} {
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			s.Logits(c.toks)
			return ""
		}()
		if !strings.HasPrefix(msg, "gpt.Sampler.Logits: ") || !strings.Contains(msg, c.want) {
			t.Errorf("Logits(%v): panic %q, want one naming %q", c.toks, msg, c.want)
		}
	}
	if got := s.Logits([]int32{1, 2, 3, 4}); len(got) != 7 {
		t.Fatalf("Logits of a full block: %d values, want 7", len(got))
	}
}
