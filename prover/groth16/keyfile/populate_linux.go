package keyfile

import "syscall"

// populateFlag makes mmap fault the mapping in (Populate).
const populateFlag = syscall.MAP_POPULATE
