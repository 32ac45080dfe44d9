// Package generic holds the pure-Go reference implementations of every
// simdgpt kernel.
//
// These functions are the oracle the assembly kernels are tested against
// and the fallback used on CPUs without a faster implementation (and the
// only path under the purego build tag). They favour clarity and a
// deterministic order of operations over speed.
//
// Shapes are not validated here beyond Go's own bounds checks; package
// github.com/simdgpt/simdgpt/kernels checks every argument before it calls
// into an implementation and is the package most programs should import.
package generic
