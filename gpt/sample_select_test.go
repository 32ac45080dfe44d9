package gpt

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/race"
	"github.com/simdgpt/simdgpt/kernels"
)

// sortedDraw is the sampler's draw as it was before the selection: sort
// every token by logit (descending, ties by lower id), weigh the topK
// first (all when topK <= 0 or >= V) by exp((logit - max)/temperature),
// cut them to the nucleus, and walk the rest in that order with u (a
// Float64 draw). It returns the token, the kept tokens in order and
// their weights. It is the reference for the candidate sets and the
// distribution of Sampler.draw.
func sortedDraw(logits []float32, temperature float64, topK int, topP, u float64) (int32, []int, []float64) {
	V := len(logits)
	order := make([]int, V)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		la, lb := logits[order[a]], logits[order[b]]
		return la > lb || (la == lb && order[a] < order[b])
	})
	k := V
	if topK > 0 && topK < V {
		k = topK
	}
	top := float64(logits[order[0]])
	probs := make([]float64, k)
	var sum float64
	for i := 0; i < k; i++ {
		p := math.Exp((float64(logits[order[i]]) - top) / temperature)
		probs[i] = p
		sum += p
	}
	if kept := nucleus(probs[:k], sum, topP); kept < k {
		k, sum = kept, 0
		for _, p := range probs[:k] {
			sum += p
		}
	}
	u *= sum
	tok := int32(order[k-1])
	for i := 0; i < k; i++ {
		u -= probs[i]
		if u < 0 {
			tok = int32(order[i])
			break
		}
	}
	return tok, order[:k], probs[:k]
}

// testSampler is a Sampler with only what draw reads: the logits and
// its scratch.
func testSampler(logits []float32) *Sampler {
	return &Sampler{logits: logits, drawScratch: newDrawScratch(kernels.Default(), len(logits))}
}

// logitCase is a table of logits for the selection tests.
type logitCase struct {
	name   string
	logits []float32
}

// logitCases returns logits with the shapes the selection must get right:
// random, coarse (many ties), all equal, with -Inf and ±0 among them,
// sorted both ways, one token, and GPT-2's vocabulary size.
func logitCases() []logitCase {
	r := rng.New(11)
	gen := func(n int, f func(i int) float32) []float32 {
		l := make([]float32, n)
		for i := range l {
			l[i] = f(i)
		}
		return l
	}
	return []logitCase{
		{"random 100", gen(100, func(int) float32 { return float32(3 * r.Normal()) })},
		{"ties 200", gen(200, func(int) float32 { return float32(r.Intn(6)) })},
		{"all equal 64", gen(64, func(int) float32 { return 1.5 })},
		{"-Inf and zeros", gen(90, func(i int) float32 {
			switch i % 5 {
			case 0:
				return float32(math.Inf(-1))
			case 1:
				return float32(math.Copysign(0, -1))
			case 2:
				return 0
			}
			return float32(r.Normal())
		})},
		{"ascending 300", gen(300, func(i int) float32 { return float32(i) / 40 })},
		{"descending 300", gen(300, func(i int) float32 { return -float32(i) / 40 })},
		{"one token", []float32{0.25}},
		{"two tied", []float32{2, 2}},
		{"vocab 50257", gen(50257, func(int) float32 { return float32(2 * r.Normal()) })},
		{"flat 50257", gen(50257, func(int) float32 { return float32(0.5 * r.Normal()) })},
		// Within a few bucket widths of one another: the cut bucket holds
		// hundreds of tokens.
		{"narrow 2000", gen(2000, func(int) float32 { return float32(0.002 * r.Normal()) })},
		// Scaled by 1/temperature < 1 these overflow float32.
		{"huge 500", gen(500, func(int) float32 { return float32(3e38 * (2*r.Float64() - 1)) })},
	}
}

// TestRankKeyOrder checks that rank keys order tokens as the reference
// sort does: logit descending, -0 equal to +0, ties by lower id.
func TestRankKeyOrder(t *testing.T) {
	negz := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		la, lb float32
		a, b   int
		want   bool // a ranks before b
	}{
		{1, 0, 5, 2, true},
		{0, 1, 2, 5, false},
		{1, 1, 2, 5, true},
		{1, 1, 5, 2, false},
		{negz, 0, 3, 4, true},
		{0, negz, 4, 3, false},
		{-1, -2, 9, 1, true},
		{-1e-30, negz, 0, 1, false},
		{-inf, -3e38, 0, 1, false},
		{inf, 3e38, 1, 0, true},
		{1e-45, 0, 7, 1, true},
	} {
		if got := rankKey(c.la, c.a) > rankKey(c.lb, c.b); got != c.want {
			t.Errorf("rankKey(%g, %d) > rankKey(%g, %d) = %v, want %v", c.la, c.a, c.lb, c.b, got, c.want)
		}
		if keyID(rankKey(c.la, c.a)) != c.a {
			t.Errorf("keyID(rankKey(%g, %d)) = %d", c.la, c.a, keyID(rankKey(c.la, c.a)))
		}
	}
}

// TestTopKeysMatchSort checks top-k's candidates, in order, against the
// reference sort, for k from 1 to past V, through both the heap and the
// quickselect.
func TestTopKeysMatchSort(t *testing.T) {
	for _, c := range logitCases() {
		V := len(c.logits)
		_, order, _ := sortedDraw(c.logits, 1, 0, 0, 0)
		for _, k := range []int{1, 2, 5, 40, V / 4, V/4 + 1, V / 2, V - 1, V} {
			if k < 1 || k > V {
				continue
			}
			keys := make([]uint64, V)
			topKeys(keys, c.logits, k)
			got := make([]int, k)
			for i, key := range keys[:k] {
				got[i] = keyID(key)
			}
			if !slices.Equal(got, order[:k]) {
				t.Errorf("%s, k=%d: topKeys %v, sort %v", c.name, k, head(got), head(order[:k]))
			}
		}
	}
}

// head is the start of a long list, for messages.
func head(a []int) []int { return a[:min(len(a), 12)] }

// TestDrawCandidatesMatchSort checks, on every logit case, that the tokens
// draw can return are the reference's kept set (top-k, then top-p, ties
// and the boundary token included), and that with top-k (walked in rank
// order) the drawn token equals the reference's for the same u.
func TestDrawCandidatesMatchSort(t *testing.T) {
	skipUnderRace(t)
	for _, c := range logitCases() {
		V := len(c.logits)
		for _, o := range []struct {
			temp float64
			topK int
			topP float64
		}{
			{1, 0, 0}, {0.8, 0, 0}, {0.8, 40, 0}, {0.8, 0, 0.95}, {0.8, 40, 0.95},
			{1, 1, 0}, {1, V, 0}, {1, V + 7, 0.5}, {2, V - 1, 0},
			{0.7, 0, 1e-9}, {0.7, 0, 0.5}, {0.7, 0, 1 - 1e-9}, {1.3, 0, 0.999},
			{0.9, 5, 1e-9}, {0.9, 5, 1 - 1e-9}, {1, 0, 1}, {1, 0, 0.25},
			{0.5, 0, 0.9}, {0.5, 0, 0}, {1e-3, 0, 0.9}, {1e-40, 0, 0.9}, {1e-40, 0, 0}, {1e300, 0, 0.5},
		} {
			name := fmt.Sprintf("%s, T=%g k=%d p=%g", c.name, o.temp, o.topK, o.topP)
			_, order, probs := sortedDraw(c.logits, o.temp, o.topK, o.topP, 0)
			want := map[int]bool{}
			for i, id := range order {
				if probs[i] > 0 {
					want[id] = true
				}
			}
			s := testSampler(c.logits)
			got := s.keptSet(o.temp, o.topK, o.topP)
			if len(got) != len(want) {
				t.Errorf("%s: %d tokens kept, reference %d", name, len(got), len(want))
				continue
			}
			for id := range got {
				if !want[id] {
					t.Errorf("%s: token %d kept, not by the reference", name, id)
					break
				}
			}
			if o.topK > 0 && o.topK < V {
				r := rng.New(5)
				draws := 50
				if testing.Short() && V > 10000 {
					draws = 5 // each reference draw sorts the vocabulary
				}
				for range draws {
					st := r.State()
					u := r.Float64()
					r.SetState(st)
					ref, _, _ := sortedDraw(c.logits, o.temp, o.topK, o.topP, u)
					if tok := s.draw(o.temp, o.topK, o.topP, r); tok != ref {
						t.Errorf("%s, u=%g: drew %d, reference %d", name, u, tok, ref)
						break
					}
				}
			}
		}
	}
}

// keptSet returns the tokens draw can return at these options: those
// with a nonzero weight among its candidates (Sampler.candidates).
func (s *Sampler) keptSet(temperature float64, topK int, topP float64) map[int]bool {
	set := map[int]bool{}
	k, _ := s.candidates(temperature, topK, topP)
	if k > 0 {
		for i, key := range s.keys[:k] {
			if s.probs[i] > 0 {
				set[keyID(key)] = true
			}
		}
		return set
	}
	for i := range s.logits {
		if s.w[i] > 0 && int(s.bkt[i]) < s.cut {
			set[i] = true
		}
	}
	for _, key := range s.keys[:s.cutN] {
		if id := keyID(key); key >= s.cutLast && s.w[id] > 0 {
			set[id] = true
		}
	}
	return set
}

// TestDrawDistribution draws many tokens (200,000 a case, 40,000 under
// -short) with a fixed seed and compares
// the counts with the reference's renormalised probabilities by
// chi-square: the statistic must stay below df + 6·sqrt(2·df) (a p-value
// far below 1e-6 for a correct sampler), and no token outside the
// reference's kept set may be drawn. Each options row also runs with its
// temperature off by 10%, which the same bound must reject, so the test
// can tell a wrong distribution from a right one. The logits are 30
// spread ones (about one token per weight bucket) and 300 rounded to
// 0.25 (ties: a dozen tokens or more per bucket, the cut one included).
func TestDrawDistribution(t *testing.T) {
	skipUnderRace(t)
	r := rng.New(21)
	spread := make([]float32, 30)
	for i := range spread {
		spread[i] = float32(r.Normal())
	}
	spread[3], spread[17] = spread[9], spread[9] // ties
	spread[25] = float32(math.Inf(-1))
	coarse := make([]float32, 300)
	for i := range coarse {
		coarse[i] = float32(math.Round(4*r.Normal()) / 4)
	}
	draws := 200000
	if testing.Short() {
		// Still enough for a temperature 10% off to fail every case.
		draws = 40000
	}
	for _, o := range []struct {
		logits []float32
		temp   float64
		topK   int
		topP   float64
	}{
		{spread, 1, 0, 0}, {spread, 0.8, 0, 0}, {spread, 0.8, 8, 0}, {spread, 0.8, 0, 0.9},
		{spread, 1.5, 0, 0.6}, {spread, 0.8, 12, 0.7}, {spread, 2, 29, 0},
		{coarse, 0.8, 0, 0}, {coarse, 0.8, 0, 0.95}, {coarse, 1, 0, 0.5}, {coarse, 0.8, 40, 0.9},
	} {
		logits := o.logits
		_, order, probs := sortedDraw(logits, o.temp, o.topK, o.topP, 0)
		var sum float64
		for _, p := range probs {
			sum += p
		}
		chi2 := func(temp float64) (float64, int, error) {
			s := testSampler(logits)
			counts := make([]int, len(logits))
			rr := rng.New(99)
			for range draws {
				counts[s.draw(temp, o.topK, o.topP, rr)]++
			}
			stat, df := 0.0, -1
			seen := 0
			for i, id := range order {
				want := float64(draws) * probs[i] / sum
				if want == 0 {
					continue
				}
				d := float64(counts[id]) - want
				stat += d * d / want
				df++
				seen += counts[id]
			}
			if seen != draws {
				return 0, 0, fmt.Errorf("%d of %d draws outside the reference's kept tokens %v", draws-seen, draws, order)
			}
			return stat, df, nil
		}
		stat, df, err := chi2(o.temp)
		if err != nil {
			t.Errorf("V=%d T=%g k=%d p=%g: %v", len(logits), o.temp, o.topK, o.topP, err)
			continue
		}
		bound := float64(df) + 6*math.Sqrt(2*float64(df))
		if df > 0 && stat > bound {
			t.Errorf("V=%d T=%g k=%d p=%g: chi-square %.1f over %d degrees of freedom, bound %.1f", len(logits), o.temp, o.topK, o.topP, stat, df, bound)
		}
		if df < 2 {
			continue
		}
		if off, _, err := chi2(o.temp * 1.1); err == nil && off <= bound {
			t.Errorf("V=%d T=%g k=%d p=%g: temperature 10%% off passes too (chi-square %.1f, bound %.1f): the test cannot see a wrong distribution", len(logits), o.temp, o.topK, o.topP, off, bound)
		}
	}
}

// TestDrawSeeded checks that the same seed gives the same tokens, draw
// after draw, in every mode, and through GenerateWith on a model.
func TestDrawSeeded(t *testing.T) {
	r := rng.New(4)
	logits := make([]float32, 5000)
	for i := range logits {
		logits[i] = float32(2 * r.Normal())
	}
	for _, o := range []SampleOptions{{0, 0, 0}, {0.8, 0, 0}, {0.8, 40, 0}, {0.8, 0, 0.95}, {1, 3000, 0.9}} {
		var runs [2][]int32
		for j := range runs {
			s, rr := testSampler(logits), rng.New(8)
			for range 300 {
				runs[j] = append(runs[j], s.draw(o.Temperature, o.TopK, o.TopP, rr))
			}
		}
		if !slices.Equal(runs[0], runs[1]) {
			t.Errorf("%+v: two runs with seed 8 differ", o)
		}
		if o.Temperature > 0 && len(slices.Compact(slices.Clone(runs[0]))) < 10 {
			t.Errorf("%+v: 300 draws give fewer than 10 distinct runs: %v", o, runs[0][:20])
		}
	}
	cfg := Config{Vocab: 40, BlockSize: 16, Layers: 1, Heads: 2, Width: 8}
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []SampleOptions{{0.8, 0, 0}, {0.8, 5, 0}, {0.8, 0, 0.9}} {
		var runs [2][]int32
		for j := range runs {
			if err := m.NewSampler().GenerateWith([]int32{1, 2}, 40, o, rng.New(3), func(tok int32) error { runs[j] = append(runs[j], tok); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if len(runs[0]) != 40 || !slices.Equal(runs[0], runs[1]) {
			t.Errorf("%+v: GenerateWith with seed 3 gives %v, then %v", o, runs[0], runs[1])
		}
	}
}

// TestDrawAllocates checks that draw allocates nothing in any mode.
func TestDrawAllocates(t *testing.T) {
	r := rng.New(6)
	logits := make([]float32, 50257)
	for i := range logits {
		logits[i] = float32(r.Normal())
	}
	s := testSampler(logits)
	for _, o := range []SampleOptions{{0, 0, 0}, {0.8, 0, 0}, {0.8, 40, 0}, {0.8, 5000, 0}, {0.8, 0, 0.95}, {0.8, 40, 0.95}} {
		if n := testing.AllocsPerRun(5, func() { s.draw(o.Temperature, o.TopK, o.TopP, r) }); n != 0 {
			t.Errorf("%+v: %g allocations per draw", o, n)
		}
	}
}

// BenchmarkDraw measures one draw from V = 50257 logits (normal, standard
// deviation 2) by the sampler (impl=select) and by the sort it replaced
// (impl=sort, sortedDraw without its allocations' share separated).
func BenchmarkDraw(b *testing.B) {
	r := rng.New(12)
	logits := make([]float32, 50257)
	for i := range logits {
		logits[i] = float32(2 * r.Normal())
	}
	for _, o := range []struct {
		name string
		SampleOptions
	}{
		{"greedy", SampleOptions{0, 0, 0}},
		{"temp=0.8", SampleOptions{0.8, 0, 0}},
		{"top_k=40", SampleOptions{0.8, 40, 0}},
		{"top_p=0.95", SampleOptions{0.8, 0, 0.95}},
	} {
		b.Run(o.name+"/impl=select", func(b *testing.B) {
			s, rr := testSampler(logits), rng.New(1)
			b.ReportAllocs()
			for b.Loop() {
				s.draw(o.Temperature, o.TopK, o.TopP, rr)
			}
		})
		if o.Temperature == 0 {
			continue
		}
		b.Run(o.name+"/impl=sort", func(b *testing.B) {
			rr := rng.New(1)
			for b.Loop() {
				sortedDraw(logits, o.Temperature, o.TopK, o.TopP, rr.Float64())
			}
		})
	}
}

// skipUnderRace skips the sampler's statistical tests under the race
// detector: millions of draws on one goroutine, minutes under -race, with
// nothing shared to race on; every other run of the suite runs them.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if race.Enabled {
		t.Skip("one goroutine's statistics: run without -race")
	}
}
