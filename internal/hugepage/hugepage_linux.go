package hugepage

import "syscall"

// advise marks the n bytes at p (huge-page aligned) MADV_HUGEPAGE. A
// kernel without transparent huge pages refuses, which changes nothing.
func advise(p, n uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, p, n, syscall.MADV_HUGEPAGE)
}
