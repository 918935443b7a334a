//go:build unix

package keyfile

import (
	"fmt"
	"os"
	"syscall"
)

// mapsFile: a key's points are views of the file's mapping (Leased
// guards them).
const mapsFile = true

// mapFile maps size bytes of f read-only and shared: the pages are the page
// cache's own, so several processes mapping one key share its memory. With
// populate the pages are faulted in by the call (populateFlag).
func mapFile(f *os.File, size int64, populate bool) ([]byte, error) {
	if int64(int(size)) != size {
		return nil, fmt.Errorf("mmap %d bytes: too large for this host", size)
	}
	flags := syscall.MAP_SHARED
	if populate {
		flags |= populateFlag
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, flags)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	return b, nil
}

// unmapFile releases a mapping from mapFile.
func unmapFile(b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return nil
}
