// Package generic holds the pure-Go reference implementations of every
// simdgpt kernel.
//
// These functions are the oracle the assembly kernels are tested against
// and the fallback used on CPUs without a faster implementation (and the
// only path under the purego build tag). They favour clarity and a
// deterministic order of operations over speed.
//
// Shapes are not validated here beyond Go's own bounds checks: the
// package is internal, and package github.com/simdgpt/simdgpt/kernels
// checks every argument before it calls into an implementation. Each
// function here is the implementation "generic" of package kernels
// (kernels.Lookup("generic")), which is how programs call it.
package generic
