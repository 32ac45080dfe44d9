package kernels

import (
	"fmt"
	"os"
	"strings"

	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
)

// EnvISA is the environment variable that forces one implementation for a
// whole program, for example SIMDGPT_ISA=avx2.
const EnvISA = "SIMDGPT_ISA"

// registry lists every implementation compiled into this binary: generic,
// then the sets the ISA packages registered (imported for that in
// isa_amd64.go and isa_arm64.go), slowest to fastest.
var registry = func() []*Impl {
	impls := []*Impl{{*genericSet}}
	for _, s := range kernelset.All() {
		impls = append(impls, &Impl{*s})
	}
	return impls
}()

var genericImpl = registry[0]

// variants are the registered implementations on each of their GEMM tiles
// (see Impl.TileVariants), by name ("avx512/8x48").
var variants = func() map[string]*Impl {
	out := map[string]*Impl{}
	for _, p := range registry {
		for _, t := range p.set.Instruments.Tiles {
			s := p.set.Instruments.WithTile(t)
			s.Name = p.set.Name + "/" + t
			out[s.Name] = &Impl{*s}
		}
	}
	return out
}()

// envErr is what was wrong with SIMDGPT_ISA at start-up, if anything.
var envErr error

func init() {
	p, err := chooseDefault(os.Getenv(EnvISA))
	if err != nil {
		envErr = err
		fmt.Fprintf(os.Stderr, "simdgpt/kernels: %v; using %s\n", err, p.Name())
	}
	current.Store(p)
}

// chooseDefault returns the implementation named by env (spaces around it
// ignored), or the fastest available one when env is empty. When env names
// no implementation this CPU can run it returns the fastest one and the
// error.
func chooseDefault(env string) (*Impl, error) {
	impls := Implementations()
	fastest := impls[len(impls)-1]
	env = strings.TrimSpace(env)
	if env == "" {
		return fastest, nil
	}
	p, err := Lookup(env)
	if err != nil {
		return fastest, fmt.Errorf("%s=%w", EnvISA, err)
	}
	return p, nil
}

// EnvError reports a SIMDGPT_ISA that could not be honoured at start-up
// (an unknown implementation, or one this CPU cannot run); nil if it was
// empty or valid. The package then uses its automatic choice and has
// printed one line on stderr; a command may call EnvError to exit instead.
func EnvError() error { return envErr }

// Implementations returns every implementation this CPU and OS can run,
// generic first, the fastest last.
func Implementations() []*Impl {
	var out []*Impl
	for _, p := range registry {
		if p.set.Available {
			out = append(out, p)
		}
	}
	return out
}

// Lookup returns the implementation with the given name, or with a name
// "IMPL/TILE" that implementation on another GEMM tile (see
// Impl.TileVariants). It fails if no such implementation exists in this
// build or this CPU cannot run it.
func Lookup(name string) (*Impl, error) {
	base, tile, withTile := strings.Cut(name, "/")
	for _, p := range registry {
		if p.set.Name != base {
			continue
		}
		if !p.set.Available {
			return nil, fmt.Errorf("%s: this CPU or OS does not support %s (needs %s); available: %s", name, base, p.set.Requires, availableNames())
		}
		if !withTile {
			return p, nil
		}
		if v, ok := variants[name]; ok {
			return v, nil
		}
		if len(p.set.Instruments.Tiles) == 0 {
			return nil, fmt.Errorf("%s: %s has no GEMM tiles to choose from", name, base)
		}
		return nil, fmt.Errorf("%s: %s has no tile %q; its tiles: %s", name, base, tile, strings.Join(p.set.Instruments.Tiles, ", "))
	}
	return nil, fmt.Errorf("%s: no such implementation in this build; available: %s", name, availableNames())
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
		names = append(names, p.set.Name)
	}
	return strings.Join(names, ", ")
}
