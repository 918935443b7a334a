package gpubench

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"unsafe"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/hostmem"
	"github.com/cuzk-dev/cuzk/internal/smaps"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// LinkConfig is what Link measures: Bytes of each kind of host memory sent
// to the device in chunks of Chunk bytes (into two device buffers in turn,
// as a streamed MSM sends its bases), Runs times after a warm-up. Dir holds
// the file of the file-mapped row (a key file's way), removed afterwards.
type LinkConfig struct {
	Bytes, Chunk int64
	Runs         int
	Dir          string
	Seed         uint64
}

// LinkRow is one kind of host memory: its median, slowest and fastest
// host-to-device rate in bytes per second (CUDA events around the whole
// transfer), and the bytes of it backed by huge pages (/proc/self/smaps:
// AnonHugePages or FilePmdMapped; -1 where not found).
type LinkRow struct {
	Source              string
	Median, Min, Max    float64
	HugeBytes, MapBytes int64
}

// linkSource is one kind of host memory: open maps and page-locks Bytes of
// it filled with data, and returns them with the function that releases
// them.
type linkSource struct {
	name string
	open func(c *driver.Ctx, data []byte) ([]byte, func() error, error)
}

// Link measures the host-to-device link from each kind of host memory a
// proving key's bases may be streamed from: memory the driver allocates
// pinned, anonymous memory in base pages and in transparent huge pages
// page-locked by registration (internal/hostmem, the daemon's vectors), and
// a file mapped read-only and registered read-only (a raw key file). Each
// row's last chunk is read back and compared with what was sent.
func Link(dev *driver.Device, cfg LinkConfig) ([]LinkRow, error) {
	if cfg.Bytes <= 0 || cfg.Chunk <= 0 || cfg.Chunk > cfg.Bytes || cfg.Runs < 1 {
		return nil, fmt.Errorf("link: %d bytes in chunks of %d, %d runs: want 0 < chunk ≤ bytes and runs ≥ 1",
			cfg.Bytes, cfg.Chunk, cfg.Runs)
	}
	data := make([]byte, cfg.Bytes)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6c696e6b))
	for i := 0; i+8 <= len(data); i += 8 {
		*(*uint64)(unsafe.Pointer(&data[i])) = rng.Uint64()
	}
	var rows []LinkRow
	for _, src := range linkSources(cfg.Dir) {
		row, err := linkRow(dev, cfg, src, data)
		if err != nil {
			return rows, fmt.Errorf("link from %s: %w", src.name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func linkSources(dir string) []linkSource {
	anon := func(huge bool) func(c *driver.Ctx, data []byte) ([]byte, func() error, error) {
		return func(c *driver.Ctx, data []byte) ([]byte, func() error, error) {
			var b []byte
			var err error
			if huge {
				b, err = hostmem.Alloc(len(data))
			} else {
				b, err = syscall.Mmap(-1, 0, len(data), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
				if err == nil {
					_ = syscall.Madvise(b, syscall.MADV_NOHUGEPAGE) // a hint, refused where THP is not built in
				}
			}
			if err != nil {
				return nil, nil, err
			}
			unmap := func() error {
				if huge {
					return hostmem.Free(b)
				}
				return syscall.Munmap(b)
			}
			copy(b, data)
			h, err := c.HostRegister(b)
			if err != nil {
				return nil, nil, errors.Join(err, unmap())
			}
			return b, func() error { return errors.Join(c.HostUnregister(h), unmap()) }, nil
		}
	}
	return []linkSource{
		{"pinned by the driver (cuMemHostAlloc)", func(c *driver.Ctx, data []byte) ([]byte, func() error, error) {
			h, err := c.HostAlloc(len(data))
			if err != nil {
				return nil, nil, err
			}
			copy(h.Bytes(), data)
			return h.Bytes(), func() error { return c.HostFree(h) }, nil
		}},
		{"anonymous, base pages, registered", anon(false)},
		{"anonymous, huge pages asked, registered (internal/hostmem)", anon(true)},
		{"file mapped read-only, registered read-only (a raw key file)", func(c *driver.Ctx, data []byte) ([]byte, func() error, error) {
			return mappedFile(c, dir, data)
		}},
	}
}

// mappedFile writes data to a new file in dir, maps it read-only and
// shared with every page faulted in (MAP_POPULATE, as keyfile.Populate
// maps a key file), and registers it read-only.
func mappedFile(c *driver.Ctx, dir string, data []byte) ([]byte, func() error, error) {
	f, err := os.CreateTemp(dir, "cuzk-link-*.bin")
	if err != nil {
		return nil, nil, err
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	var b []byte
	if err == nil {
		b, err = syscall.Mmap(int(f.Fd()), 0, len(data), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		return nil, nil, errors.Join(err, os.Remove(name))
	}
	drop := func() error { return errors.Join(syscall.Munmap(b), os.Remove(name)) }
	h, err := c.HostRegisterReadOnly(b)
	if err != nil {
		return nil, nil, errors.Join(err, drop())
	}
	return b, func() error { return errors.Join(c.HostUnregister(h), drop()) }, nil
}

func linkRow(dev *driver.Device, cfg LinkConfig, src linkSource, data []byte) (LinkRow, error) {
	row := LinkRow{Source: src.name, HugeBytes: -1}
	err := dev.Do(func(c *driver.Ctx) (err error) {
		host, release, err := src.open(c, data)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, release()) }()
		row.HugeBytes, row.MapBytes = hugeBacked(host)
		chunk := int(cfg.Chunk)
		var bufs [2]driver.DevicePtr
		for i := range bufs {
			if bufs[i], err = c.Alloc(chunk); err != nil {
				return err
			}
			defer func(p driver.DevicePtr) { err = errors.Join(err, c.Free(p)) }(bufs[i])
		}
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, c.DestroyStream(s)) }()
		tm, err := c.NewTimer()
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, c.FreeTimer(tm)) }()
		last := 0
		send := func() error {
			for i, off := 0, 0; off < len(host); i, off = i+1, off+chunk {
				end := min(off+chunk, len(host))
				if err := c.HtoDAsync(bufs[i%2], host[off:end], s); err != nil {
					return err
				}
				last = i
			}
			return nil
		}
		var rates []float64
		for i := 0; i <= cfg.Runs; i++ {
			d, err := c.Time(tm, s, send)
			if err != nil {
				return err
			}
			if i > 0 {
				rates = append(rates, float64(len(host))/d.Seconds())
			}
		}
		off := last * chunk
		back := make([]byte, len(host)-off)
		if err := c.DtoH(back, bufs[last%2]); err != nil {
			return err
		}
		if !bytes.Equal(back, data[off:]) {
			return fmt.Errorf("the last chunk read back differs from the one sent")
		}
		row.Median, row.Min, row.Max = stats.Median(rates), slices.Min(rates), slices.Max(rates)
		return nil
	})
	return row, err
}

// hugeBacked reports the bytes of the mapping that holds b's first byte
// that huge pages back (AnonHugePages + FilePmdMapped in /proc/self/smaps)
// and the mapping's size; -1 and 0 where the mapping is not found.
func hugeBacked(b []byte) (huge, size int64) {
	return smapsHuge("/proc/self/smaps", uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))))
}

func smapsHuge(path string, addr uint64) (huge, size int64) {
	maps, err := smaps.Read(path)
	if err != nil {
		return -1, 0
	}
	i, ok := smaps.Holding(maps, addr)
	if !ok {
		return -1, 0
	}
	m := maps[i]
	return m.AnonHuge + m.FilePmd, int64(m.End - m.Start)
}
