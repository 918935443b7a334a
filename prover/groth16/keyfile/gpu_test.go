package keyfile_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
)

var gpuLog = flag.Int("keyfile.gpulog", 18, "log2 of the synthetic key's domain in TestGPUUploadFromMappedKey")

// uploadChunk is the size of one pinned staging buffer.
const uploadChunk = 64 << 20

// TestGPUUploadFromMappedKey measures the whole load of a key's points from
// the page cache onto GPU 0: map the raw file, set up the device memory and
// two pinned buffers, copy each point section through them (the host copy
// of one overlapping the DMA of the other); then it checks every byte that
// arrived, a check that is the test's, not part of the load, and timed
// apart. It skips visibly without a GPU.
func TestGPUUploadFromMappedKey(t *testing.T) {
	dev, err := driver.Open(0)
	if errors.Is(err, driver.ErrNoGPU) {
		t.Skipf("no CUDA GPU on this machine: %v", err)
	}
	require.NoError(t, err)
	defer dev.Close()
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, keyfile.Write(path, syntheticKey(1<<*gpuLog), keyfile.SkipChecks()))
	warm(t, path)
	for _, mode := range []struct{ verify, populate bool }{{false, false}, {true, false}, {false, true}} {
		verify := mode.verify
		start := time.Now()
		var opts []keyfile.OpenOption
		if !verify {
			opts = append(opts, keyfile.SkipVerify())
		}
		if mode.populate {
			opts = append(opts, keyfile.Populate()) // the daemon's way: faulted in by the mmap call
		}
		k, err := keyfile.Open(path, opts...)
		require.NoError(t, err)
		opened := time.Since(start)
		var up upload
		require.NoError(t, dev.Do(func(c *driver.Ctx) error {
			var err error
			up, err = uploadAndCheck(c, sectionBytes(k))
			return err
		}))
		require.NoError(t, k.Close())
		n := float64(up.bytes)
		total := opened + up.setup + up.upload
		t.Logf("2^%d key, %.2f GB of points, verify %v, populate %v: open %v (%.2f GB/s), setup %v, upload %v (%.2f GB/s), "+
			"load %v: %.2f GB/s end to end (page cache → pinned → GPU); check (read back, compare) %v",
			*gpuLog, n/1e9, verify, mode.populate, opened.Round(time.Millisecond), n/opened.Seconds()/1e9, up.setup.Round(time.Millisecond),
			up.upload.Round(time.Millisecond), n/up.upload.Seconds()/1e9, total.Round(time.Millisecond), n/total.Seconds()/1e9,
			up.check.Round(time.Millisecond))
	}
}

// uploadAndCheck uploads secs into one device allocation through two pinned
// buffers, then reads it back and compares. It runs on the device's thread
// (driver.Device.Do), so it reports through errors, not t.
func uploadAndCheck(c *driver.Ctx, secs [][]byte) (up upload, err error) {
	for _, s := range secs {
		up.bytes += len(s)
	}
	setup := time.Now()
	dst, err := c.Alloc(up.bytes)
	if err != nil {
		return up, err
	}
	defer func() { err = errors.Join(err, c.Free(dst)) }()
	s, err := c.NewStream()
	if err != nil {
		return up, err
	}
	defer func() { err = errors.Join(err, c.DestroyStream(s)) }()
	var bufs [2]*driver.HostBuf
	var done [2]*driver.Event
	for i := range bufs {
		if bufs[i], err = c.HostAlloc(uploadChunk); err != nil {
			return up, err
		}
		defer func() { err = errors.Join(err, c.HostFree(bufs[i])) }()
		if done[i], err = c.NewEvent(); err != nil {
			return up, err
		}
		defer func() { err = errors.Join(err, c.DestroyEvent(done[i])) }()
	}
	start := time.Now()
	up.setup = start.Sub(setup)
	if err := pipeline(c, s, dst, secs, bufs, done); err != nil {
		return up, err
	}
	up.upload = time.Since(start)
	defer func(start time.Time) { up.check = time.Since(start) }(time.Now())
	back := make([]byte, up.bytes)
	if err := c.DtoH(back, dst); err != nil {
		return up, err
	}
	off := 0
	for i, sec := range secs {
		if !bytes.Equal(sec, back[off:off+len(sec)]) {
			return up, fmt.Errorf("vector %d: device bytes differ from the file", i)
		}
		off += len(sec)
	}
	return up, nil
}

// upload is what uploadAndCheck moved and how long its parts took: the
// device and pinned allocations, the copies, and the check after them.
type upload struct {
	bytes                int
	setup, upload, check time.Duration
}

// pipeline copies each 64 MiB piece of secs into a pinned buffer and
// enqueues its DMA, alternating buffers so that the host copy of one piece
// overlaps the DMA of the one before.
func pipeline(c *driver.Ctx, s *driver.Stream, dst driver.DevicePtr, secs [][]byte, bufs [2]*driver.HostBuf, done [2]*driver.Event) error {
	off, i := 0, 0
	for _, sec := range secs {
		for lo := 0; lo < len(sec); lo += uploadChunk {
			piece := sec[lo:min(lo+uploadChunk, len(sec))]
			b := i % 2
			if i >= 2 {
				if err := c.SyncEvent(done[b]); err != nil { // the buffer's last DMA is over
					return err
				}
			}
			pin := bufs[b].Bytes()[:len(piece)]
			parallelCopy(pin, piece)
			if err := c.HtoDAsync(dst.Add(off), pin, s); err != nil {
				return err
			}
			if err := c.Record(done[b], s); err != nil {
				return err
			}
			off, i = off+len(piece), i+1
		}
	}
	return c.SyncStream(s)
}

// parallelCopy copies src into dst on 8 goroutines (memmove from mapped
// page-cache pages is bound by one core's copy rate).
func parallelCopy(dst, src []byte) {
	const parts = 8
	chunk := (len(src) + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := 0; lo < len(src); lo += chunk {
		hi := min(lo+chunk, len(src))
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}
