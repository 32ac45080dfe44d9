// Package kernelstest runs a test once per kernel implementation, the way
// golang.org/x/crypto's tests loop over their implementations and the
// standard library's crypto/internal/impl offers TestAllImplementations:
// every package above kernels (attention, gpt) calls ForEach so that every
// implementation this CPU can run is exercised by every layer on every
// machine, not only the process-wide default.
package kernelstest

import (
	"slices"
	"testing"

	"github.com/simdgpt/simdgpt/kernels"
	"github.com/simdgpt/simdgpt/kernels/internal/cpuexpect"
)

// Expected returns the implementations this build must offer on this
// CPU, generic first. A test that finds one missing fails rather than
// skips.
func Expected() []string { return cpuexpect.Implementations() }

// ForEach runs f as a subtest named after each implementation this CPU
// can run (kernels.Implementations()). It fails the test first if that
// list is not Expected().
func ForEach(t *testing.T, f func(t *testing.T, p *kernels.Impl)) {
	t.Helper()
	impls := kernels.Implementations()
	var names []string
	for _, p := range impls {
		names = append(names, p.Name())
	}
	if want := Expected(); !slices.Equal(names, want) {
		t.Fatalf("kernels.Implementations() = %v, want %v on this CPU and build", names, want)
	}
	for _, p := range impls {
		t.Run(p.Name(), func(t *testing.T) { f(t, p) })
	}
}
