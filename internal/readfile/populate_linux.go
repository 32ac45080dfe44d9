package readfile

import "syscall"

// mapPopulate has the system fill a new mapping's page tables from the
// page cache in one pass (reading what is not cached ahead), instead of
// one fault per few pages as they are first read.
const mapPopulate = syscall.MAP_POPULATE
