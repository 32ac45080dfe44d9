package rng

import (
	"math"
	"testing"
)

func TestStateRestoresSequence(t *testing.T) {
	r := New(42)
	for i := 0; i < 10; i++ {
		r.Uint64()
	}
	s := r.State()
	want := []uint64{r.Uint64(), r.Uint64(), r.Uint64()}
	r2 := New(7)
	r2.SetState(s)
	for i, w := range want {
		if got := r2.Uint64(); got != w {
			t.Fatalf("value %d after SetState: got %d want %d", i, got, w)
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	if New(1).Uint64() == New(2).Uint64() {
		t.Fatal("seeds 1 and 2 give the same first value")
	}
}

func TestIntnUniform(t *testing.T) {
	r := New(3)
	const n, draws = 7, 70000
	var count [n]int
	for i := 0; i < draws; i++ {
		v := r.Intn(n)
		if v < 0 || v >= n {
			t.Fatalf("Intn(%d) = %d", n, v)
		}
		count[v]++
	}
	for v, c := range count {
		if math.Abs(float64(c)-draws/n) > 400 {
			t.Errorf("value %d drawn %d times of %d, want about %d", v, c, draws, draws/n)
		}
	}
}

func TestNormalMoments(t *testing.T) {
	r := New(5)
	const n = 200000
	var s, s2 float64
	for i := 0; i < n; i++ {
		x := r.Normal()
		s += x
		s2 += x * x
	}
	mean, variance := s/n, s2/n-(s/n)*(s/n)
	if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.02 {
		t.Fatalf("mean %.4f variance %.4f, want 0 and 1", mean, variance)
	}
}
