package keyfile

import (
	"fmt"
	"runtime/debug"
)

// guardFaults runs f with faults in memory mappings turned into an error:
// a page of a mapped file that was truncated (or of a file system that
// failed) raises SIGBUS when touched, which ends a Go program unless the
// goroutine that touched it asked the runtime to panic instead
// (debug.SetPanicOnFault). It covers the calling goroutine only: the
// goroutines f starts must guard themselves. Any other panic goes on.
func guardFaults(f func()) (err error) {
	prev := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(prev)
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		a, ok := r.(interface{ Addr() uintptr })
		if !ok {
			panic(r)
		}
		err = fmt.Errorf("%w: reading the mapping faulted at %#x: the file was truncated or written in place after it was mapped", ErrTruncated, a.Addr())
	}()
	f()
	return nil
}
