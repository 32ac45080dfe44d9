// Package kernelset defines Set, the one list of the kernels an
// implementation of package kernels provides, and the registry of every
// implementation compiled into a program.
//
// The functions of a Set trust their arguments: package kernels checks
// every shape (kernels/check.go) before calling one, and the contracts
// below are what those checks guarantee. Because this package is
// internal, nothing outside the module can call them unchecked.
//
// Set's kernel fields are generated (set_gen.go) from the one list of the
// kernels' signatures, kernels/internal/apigen/kernels.go; the dispatch,
// the list of implementations, the benchmarks and the tests that every
// field is wired all derive from it.
package kernelset

import "sync"

var (
	mu   sync.Mutex
	sets []*Set
)

// Register adds s to the registry. The ISA packages call it from init,
// slowest implementation first.
func Register(s *Set) {
	mu.Lock()
	defer mu.Unlock()
	for _, t := range sets {
		if t.Name == s.Name {
			panic("kernelset: implementation " + s.Name + " registered twice")
		}
	}
	sets = append(sets, s)
}

// All returns every registered set, in the order of registration,
// available or not.
func All() []*Set {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Set(nil), sets...)
}

// AdamWParams are the scalars of one AdamW step (see kernels.AdamWParams,
// which converts to this type).
type AdamWParams struct {
	LR, Beta1, Beta2, Eps, WeightDecay, GradScale, InvBiasCorr1, InvBiasCorr2 float32
}
