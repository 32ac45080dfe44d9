//go:build unix

package readfile

import "syscall"

// openFlags makes opening a FIFO that replaced the checked path return at
// once instead of waiting for a writer (the opened file's check then
// refuses it); it changes nothing for a regular file.
const openFlags = syscall.O_NONBLOCK
