package kernels

import (
	"fmt"
	"os"
	"strings"

	"github.com/simdgpt/simdgpt/kernels/generic"
)

// EnvISA is the environment variable that forces one implementation for a
// whole program, for example SIMDGPT_ISA=avx2.
const EnvISA = "SIMDGPT_ISA"

var genericImpl = &Impl{
	name:      "generic",
	available: true,
	ops: ops{
		gemm:            generic.Gemm,
		softmax:         generic.Softmax,
		softmaxBackward: generic.SoftmaxBackward,
		maskedScores:    generic.MaskedScores,
		dot:             generic.Dot,
		axpy:            generic.Axpy,
		scale:           generic.Scale,
		add:             generic.Add,
		sum:             generic.Sum,
		max:             generic.Max,
	},
}

// registry lists every implementation compiled into this binary, generic
// first and then from slowest to fastest; archImpls is defined per
// architecture and build tag.
var registry = append([]*Impl{genericImpl}, archImpls()...)

func init() {
	p, err := chooseDefault(os.Getenv(EnvISA))
	if err != nil {
		fmt.Fprintf(os.Stderr, "simdgpt/kernels: %v\n", err)
		os.Exit(2)
	}
	current.Store(p)
}

// chooseDefault returns the implementation named by env, or the fastest
// available one when env is empty.
func chooseDefault(env string) (*Impl, error) {
	if env == "" {
		impls := Implementations()
		return impls[len(impls)-1], nil
	}
	return Lookup(env)
}

// Implementations returns every implementation this CPU and OS can run,
// generic first, the fastest last.
func Implementations() []*Impl {
	var out []*Impl
	for _, p := range registry {
		if p.available {
			out = append(out, p)
		}
	}
	return out
}

// Lookup returns the implementation with the given name. It fails if no
// such implementation exists in this build or this CPU cannot run it.
func Lookup(name string) (*Impl, error) {
	for _, p := range registry {
		if p.name == name {
			if !p.available {
				return nil, fmt.Errorf("%s=%s: this CPU or OS does not support %s (needs %s); available: %s", EnvISA, name, name, p.requires, availableNames())
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("%s=%s: no such implementation in this build; available: %s", EnvISA, name, availableNames())
}

// SetDefault makes the named implementation the one the package-level
// functions use, for example in a benchmark that compares them. It returns
// an error, and changes nothing, if Lookup fails.
func SetDefault(name string) error {
	p, err := Lookup(name)
	if err != nil {
		return err
	}
	current.Store(p)
	return nil
}

func availableNames() string {
	var names []string
	for _, p := range Implementations() {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}
