package gpu

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// stager moves host slices to and from device memory through two pinned
// chunks: while the DMA engine copies one chunk, the CPU fills (or drains)
// the other, with several goroutines so that the host copy keeps up with the
// PCIe link. A slice that is itself pinned (Backend.AllocHost) skips the
// chunks: the DMA engine reads or writes it directly, at the link's speed.
// Its methods run on the device thread (inside Device.Do).
type stager struct {
	buf    *driver.HostBuf
	chunk  int
	stream *driver.Stream
	ev     [2]*driver.Event
	used   [2]bool
}

func newStager(c *driver.Ctx, chunk int) (*stager, error) {
	st := &stager{chunk: chunk}
	err := st.init(c)
	if err != nil {
		_ = st.free(c) // the setup error is the one to report
		return nil, fmt.Errorf("staging: %w", err)
	}
	return st, nil
}

func (st *stager) init(c *driver.Ctx) error {
	var err error
	if st.buf, err = c.HostAlloc(2 * st.chunk); err != nil {
		return err
	}
	if st.stream, err = c.NewStream(); err != nil {
		return err
	}
	for i := range st.ev {
		if st.ev[i], err = c.NewEvent(); err != nil {
			return err
		}
	}
	return nil
}

// half returns the pinned chunk i (0 or 1) after waiting for its last copy.
func (st *stager) half(c *driver.Ctx, i int) ([]byte, error) {
	if st.used[i] {
		if err := c.SyncEvent(st.ev[i]); err != nil {
			return nil, err
		}
		st.used[i] = false
	}
	return st.buf.Bytes()[i*st.chunk : (i+1)*st.chunk], nil
}

// upload enqueues the copy of src to dst and returns when the last chunk is
// queued; wait (or a later use of the stager) completes it.
func (st *stager) upload(c *driver.Ctx, dst driver.DevicePtr, src []byte) error {
	if c.Pinned(src) {
		if err := c.HtoDAsync(dst, src, st.stream); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		return nil
	}
	for i, off := 0, 0; off < len(src); i, off = i+1, off+st.chunk {
		h, err := st.half(c, i%2)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		n := parallelCopy(h, src[off:])
		if err := c.HtoDAsync(dst.Add(off), h[:n], st.stream); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		if err := c.Record(st.ev[i%2], st.stream); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		st.used[i%2] = true
	}
	return nil
}

// wait blocks until every queued copy has completed.
func (st *stager) wait(c *driver.Ctx) error {
	if err := c.SyncStream(st.stream); err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	st.used = [2]bool{}
	return nil
}

// download copies len(dst) bytes from src into dst; the DMA of chunk i+1
// overlaps the host copy of chunk i.
func (st *stager) download(c *driver.Ctx, dst []byte, src driver.DevicePtr) error {
	if err := st.wait(c); err != nil {
		return err
	}
	if c.Pinned(dst) {
		if err := c.DtoHAsync(dst, src, st.stream); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		return st.wait(c)
	}
	nchunks := (len(dst) + st.chunk - 1) / st.chunk
	enqueue := func(i int) error {
		off := i * st.chunk
		h := st.buf.Bytes()[(i%2)*st.chunk : (i%2+1)*st.chunk]
		n := min(st.chunk, len(dst)-off)
		if err := c.DtoHAsync(h[:n], src.Add(off), st.stream); err != nil {
			return err
		}
		return c.Record(st.ev[i%2], st.stream)
	}
	if nchunks > 0 {
		if err := enqueue(0); err != nil {
			return fmt.Errorf("download: %w", err)
		}
	}
	for i := 0; i < nchunks; i++ {
		if i+1 < nchunks {
			if err := enqueue(i + 1); err != nil {
				return fmt.Errorf("download: %w", err)
			}
		}
		if err := c.SyncEvent(st.ev[i%2]); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		off := i * st.chunk
		parallelCopy(dst[off:], st.buf.Bytes()[(i%2)*st.chunk:(i%2)*st.chunk+min(st.chunk, len(dst)-off)])
	}
	return nil
}

// free releases the stager's pinned memory, stream and events.
func (st *stager) free(c *driver.Ctx) error {
	var err error
	if st.buf != nil {
		err = c.HostFree(st.buf)
	}
	for _, e := range st.ev {
		if e != nil {
			if x := c.DestroyEvent(e); err == nil {
				err = x
			}
		}
	}
	if st.stream != nil {
		if x := c.DestroyStream(st.stream); err == nil {
			err = x
		}
	}
	return err
}

// copyPiece is the smallest share of one parallel host copy.
const copyPiece = 4 << 20

// parallelCopy is copy(dst, src) split over up to GOMAXPROCS goroutines.
func parallelCopy(dst, src []byte) int {
	n := min(len(dst), len(src))
	workers := min(runtime.GOMAXPROCS(0), (n+copyPiece-1)/copyPiece)
	if workers <= 1 {
		return copy(dst, src)
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
	return n
}
