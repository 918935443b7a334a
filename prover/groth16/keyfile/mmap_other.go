//go:build !unix

package keyfile

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// mapsFile: a key's points are a copy, which no change of the file
// reaches (Leased has nothing to guard).
const mapsFile = false

// mapFile reads the file into page-aligned heap memory where mmap is not
// available: the key loads at the speed of a copy, with the same checks.
func mapFile(f *os.File, size int64, _ bool) ([]byte, error) {
	words := make([]uint64, (size+2*Align)/8)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
	skip := (Align - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%Align)) % Align
	b := raw[skip : skip+int(size)]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %d bytes: %w", size, err)
	}
	return b, nil
}

// unmapFile leaves the memory to the garbage collector.
func unmapFile([]byte) error { return nil }
