//go:build !openblas

package peers

import "github.com/simdgpt/simdgpt/bench"

// OpenBLASBuilt reports whether this binary was built with -tags openblas.
const OpenBLASBuilt = false

// openBLAS returns no peer: build with -tags openblas for OpenBLAS.
func openBLAS() []*bench.Impl { return nil }
