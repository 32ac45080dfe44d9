//go:build !linux

package hugepage

// advise does nothing: only Linux is asked for huge pages.
func advise(p, n uintptr) {}
