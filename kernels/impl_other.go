//go:build !(amd64 || arm64) || purego

package kernels

// archImpls returns no implementations: only generic is compiled in.
func archImpls() []*Impl { return nil }
