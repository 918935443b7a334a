// Package hostmem allocates large buffers outside the Go heap: anonymous,
// page-aligned private mappings. Their memory is not counted by the Go
// collector (so a memory limit need not leave room for it), is never moved
// (so the GPU may page-lock it, gpu.Backend.PinHost), and goes back to the
// system on Free at once.
package hostmem

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// mapped is the bytes Alloc has mapped and Free not yet unmapped.
var mapped atomic.Int64

// Mapped is the bytes this process holds from Alloc: mapped and not yet
// freed (resident once written; Discard leaves them mapped).
func Mapped() int64 { return mapped.Load() }

// hugePage is the size of a transparent huge page on x86-64 and arm64
// (with 4 KiB base pages).
const hugePage = 2 << 20

// Alloc maps n zeroed bytes (n > 0). A mapping of at least a huge page
// asks for transparent huge pages (madvise(MADV_HUGEPAGE), which the
// kernels' default "madvise" setting needs): its first touch, and a GPU
// driver's page-locking of it, then handle 512 times fewer pages. Where
// huge pages are off the hint is refused and ignored.
func Alloc(n int) ([]byte, error) { return alloc(n, true) }

func alloc(n int, huge bool) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("hostmem: allocate %d bytes", n)
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("hostmem: map %d bytes: %w", n, err)
	}
	if huge && n >= hugePage {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // a hint: EINVAL where THP is not built in
	}
	mapped.Add(int64(n))
	return b, nil
}

// Free unmaps b, as Alloc returned it. b must not be used afterwards.
func Free(b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("hostmem: unmap %d bytes: %w", len(b), err)
	}
	mapped.Add(-int64(len(b)))
	return nil
}

// Discard gives the whole pages under s back to the system
// (madvise(MADV_DONTNEED)) while s's addresses stay valid: reads of them
// return zeros afterwards, writes fault fresh pages in. The partial pages at
// either end, which other data may share, are left as they are. It returns
// the bytes given back. s holds plain values (no Go pointers) in any
// memory, the Go heap's included: the caller promises that nothing reads
// the discarded contents again.
func Discard[T any](s []T) (int, error) {
	if len(s) == 0 {
		return 0, nil
	}
	var zero T
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(zero))
	page := uintptr(syscall.Getpagesize())
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	start, end := (lo+page-1)&^(page-1), hi&^(page-1)
	if end <= start {
		return 0, nil
	}
	if err := syscall.Madvise(b[start-lo:end-lo], syscall.MADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("hostmem: discard %d bytes: %w", end-start, err)
	}
	return int(end - start), nil
}
