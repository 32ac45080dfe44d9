// Package rng is the small deterministic random number generator TinyGPT
// uses for initialisation, batches and sampling. Its whole state is one
// uint64, so a checkpoint can save it and a resumed run continues the exact
// same sequence.
package rng

import "math"

// RNG is a SplitMix64 generator. The zero value is a valid generator (seed 0).
// It is not safe for concurrent use.
type RNG struct {
	state uint64
}

// New returns a generator seeded with seed.
func New(seed uint64) *RNG { return &RNG{state: seed} }

// State returns the generator's whole state; SetState restores it.
func (r *RNG) State() uint64 { return r.state }

// SetState restores a state returned by State.
func (r *RNG) SetState(s uint64) { r.state = s }

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Intn returns a uniform integer in [0, n); it panics if n <= 0.
func (r *RNG) Intn(n int) int {
	if n <= 0 {
		panic("rng: Intn: n must be positive")
	}
	// Lemire's multiply-shift with rejection: unbiased.
	un := uint64(n)
	for {
		hi, lo := mul64(r.Uint64(), un)
		if lo >= un || lo >= (-un)%un {
			return int(hi)
		}
	}
}

func mul64(x, y uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	x0, x1 := x&mask32, x>>32
	y0, y1 := y&mask32, y>>32
	w0 := x0 * y0
	t := x1*y0 + w0>>32
	w1 := t&mask32 + x0*y1
	hi = x1*y1 + t>>32 + w1>>32
	lo = x * y
	return
}

// Float64 returns a uniform float64 in [0, 1).
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Normal returns a standard normal sample (Box-Muller; one of the pair is
// discarded so that the state stays a single word).
func (r *RNG) Normal() float64 {
	u1 := 1 - r.Float64() // (0, 1]
	u2 := r.Float64()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
