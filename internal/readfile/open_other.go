//go:build !unix

package readfile

// openFlags adds nothing where there are no FIFOs to wait on.
const openFlags = 0
