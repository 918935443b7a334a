package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GPU tests share one Device per test binary; each skips visibly when the
// machine has no driver or no GPU.
var shared = sync.OnceValues(OpenTestDevice)

func gpu(t *testing.T) *Device {
	t.Helper()
	d, err := shared()
	if errors.Is(err, ErrNoGPU) {
		t.Skipf("GPU test skipped: no CUDA GPU here (%v)", err)
	}
	require.NoError(t, err)
	return d
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestGPUInfo(t *testing.T) {
	d := gpu(t)
	info := d.Info()
	t.Logf("%s; CC %s; L2 %d KiB; clock %d MHz", info, info.CC(), info.L2CacheBytes>>10, info.ClockKHz/1000)
	assert.NotEmpty(t, info.Name)
	assert.GreaterOrEqual(t, info.Major, 5)
	assert.Positive(t, info.Multiprocessors)
	assert.Positive(t, info.TotalMemory)
	assert.GreaterOrEqual(t, info.MaxThreadsPerBlock, 512)
	v, err := Version()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 11000)
	var free, total int64
	require.NoError(t, d.Do(func(c *Ctx) (err error) {
		free, total, err = c.MemInfo()
		return err
	}))
	assert.Positive(t, free)
	assert.LessOrEqual(t, free, total)
	assert.Equal(t, info.TotalMemory, total)
}

// Callbacks passed to Do return errors rather than calling require: FailNow
// must run on the test's goroutine, not the device thread.

func TestGPUMemoryRoundTrip(t *testing.T) {
	d := gpu(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 4099, 1 << 20} {
		src := randBytes(r, n)
		got, filled := make([]byte, n), make([]byte, n)
		require.NoError(t, d.Do(func(c *Ctx) error {
			a, b, err := alloc2(c, n)
			if err != nil {
				return err
			}
			return errors.Join(c.HtoD(a, src), c.DtoD(b, a, n), c.DtoH(got, b),
				c.Memset(a, 0xA5, n), c.DtoH(filled, a), c.Free(a), c.Free(b))
		}))
		assert.True(t, bytes.Equal(src, got), "round trip of %d bytes differs", n)
		assert.Equal(t, bytes.Repeat([]byte{0xA5}, n), filled)
	}
}

// Memset32 fills exactly the words asked for, each with all four bytes of
// the value, and leaves the words after them alone.
func TestGPUMemset32(t *testing.T) {
	d := gpu(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 4099, 1 << 20} {
		v := r.Uint32() | 0x01000001 // no zero byte: a byte-wise fill would differ
		got := make([]uint32, n+1)
		require.NoError(t, d.Do(func(c *Ctx) error {
			a, err := c.Alloc(4 * (n + 1))
			if err != nil {
				return err
			}
			return errors.Join(c.Memset(a, 0x5A, 4*(n+1)), c.Memset32(a, v, n), c.DtoH(Bytes(got), a), c.Free(a))
		}))
		want := make([]uint32, n+1)
		for i := range n {
			want[i] = v
		}
		want[n] = 0x5A5A5A5A
		assert.Equal(t, want, got, "%d words", n)
	}
}

func alloc2(c *Ctx, n int) (DevicePtr, DevicePtr, error) {
	a, err := c.Alloc(n)
	if err != nil {
		return 0, 0, err
	}
	b, err := c.Alloc(n)
	if err != nil {
		return 0, 0, errors.Join(err, c.Free(a))
	}
	return a, b, nil
}

func TestGPUAsyncPinned(t *testing.T) {
	d := gpu(t)
	const n = 3 << 20
	src := randBytes(rand.New(rand.NewPCG(3, 4)), n)
	got := make([]byte, n)
	var notPinnedIn, notPinnedOut, doubleFree error
	var pinned []bool
	require.NoError(t, d.Do(func(c *Ctx) error {
		in, err := c.HostAlloc(n)
		if err != nil {
			return err
		}
		out, err := c.HostAlloc(n)
		if err != nil {
			return err
		}
		// Inside one buffer, a part of it, past its end, Go memory, empty.
		pinned = []bool{c.Pinned(in.Bytes()), c.Pinned(out.Bytes()[5 : n-5]),
			c.Pinned(unsafe.Slice(&in.Bytes()[1], n)), c.Pinned(src), c.Pinned(in.Bytes()[:0])}
		outBytes := out.Bytes()
		copy(in.Bytes(), src)
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		a, b, err := alloc2(c, n)
		if err != nil {
			return err
		}
		err = errors.Join(c.HtoDAsync(a, in.Bytes(), s), c.DtoDAsync(b, a, n, s),
			c.DtoHAsync(out.Bytes()[:n/2], b, s), c.DtoHAsync(out.Bytes()[n/2:], b.Add(n/2), s),
			c.SyncStream(s))
		copy(got, out.Bytes())
		notPinnedIn = c.HtoDAsync(a, make([]byte, 16), s)
		notPinnedOut = c.DtoHAsync(make([]byte, 16), a, s)
		err = errors.Join(err, c.DestroyStream(s), c.Free(a), c.Free(b), c.HostFree(in), c.HostFree(out))
		doubleFree = c.HostFree(in)
		pinned = append(pinned, c.Pinned(outBytes)) // freed: no longer pinned
		return err
	}))
	assert.Equal(t, []bool{true, true, false, false, false, false}, pinned)
	assert.True(t, bytes.Equal(src, got), "async round trip differs")
	assert.ErrorIs(t, notPinnedIn, ErrNotPinned)
	assert.ErrorIs(t, notPinnedOut, ErrNotPinned)
	assert.ErrorIs(t, doubleFree, ErrNotPinned)
}

func TestGPUHostRegister(t *testing.T) {
	d := gpu(t)
	const n = 5 << 20
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(mem)) }()
	src := randBytes(rand.New(rand.NewPCG(7, 8)), n)
	copy(mem, src)
	var pinned []bool
	var freeRegistered, unregisterTwice error
	require.NoError(t, d.Do(func(c *Ctx) error {
		pinned = append(pinned, c.Pinned(mem))
		h, err := c.HostRegister(mem)
		if err != nil {
			return err
		}
		pinned = append(pinned, c.Pinned(mem), c.Pinned(mem[7:n-7]))
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		a, err := c.Alloc(n)
		if err != nil {
			return err
		}
		// Up by DMA, cleared on the host, back down by DMA.
		err = errors.Join(c.HtoDAsync(a, mem, s), c.SyncStream(s))
		clear(mem)
		err = errors.Join(err, c.DtoHAsync(mem, a, s), c.SyncStream(s), c.DestroyStream(s), c.Free(a))
		freeRegistered = c.HostFree(h)
		err = errors.Join(err, c.HostUnregister(h))
		unregisterTwice = c.HostUnregister(h)
		pinned = append(pinned, c.Pinned(mem))
		return err
	}))
	assert.Equal(t, []bool{false, true, true, false}, pinned)
	assert.True(t, bytes.Equal(src, mem), "round trip through registered memory differs")
	assert.ErrorIs(t, freeRegistered, ErrNotPinned, "registered memory is the caller's: HostFree refuses it")
	assert.ErrorIs(t, unregisterTwice, ErrNotPinned)
}

func TestGPUAdoptPinned(t *testing.T) {
	d := gpu(t)
	const n = 1 << 20
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(mem)) }()
	var pinned []bool
	require.NoError(t, d.Do(func(c *Ctx) error {
		reg, err := c.HostRegister(mem)
		if err != nil {
			return err
		}
		// Adopting on the registering context stands in for a second GPU's:
		// forgetting the adoption must leave the registration in force.
		ad, err := c.AdoptPinned(mem)
		if err != nil {
			return err
		}
		err = c.HostUnregister(ad)
		pinned = append(pinned, c.Pinned(mem))
		s, serr := c.NewStream()
		if serr != nil {
			return errors.Join(err, serr)
		}
		a, aerr := c.Alloc(n)
		if aerr != nil {
			return errors.Join(err, aerr)
		}
		err = errors.Join(err, c.HtoDAsync(a, mem, s), c.SyncStream(s), c.DestroyStream(s), c.Free(a), c.HostUnregister(reg))
		pinned = append(pinned, c.Pinned(mem))
		return err
	}))
	assert.Equal(t, []bool{true, false}, pinned)
}

func TestGPULaunchPTX(t *testing.T) {
	d := gpu(t)
	ptx, err := os.ReadFile("testdata/axpy.ptx")
	require.NoError(t, err)
	const n, a, add = 100_003, uint64(0x9E3779B97F4A7C15), float32(3)
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]uint64, n)
	for i := range x {
		x[i] = r.Uint64()
	}
	out := make([]uint64, n)
	var attrs FuncAttrs
	var active int
	var el time.Duration
	require.NoError(t, d.Do(func(c *Ctx) error {
		m, err := c.LoadModule(ptx)
		if err != nil {
			return err
		}
		f, err := c.Function(m, "axpy_u64")
		if err != nil {
			return err
		}
		if attrs, err = c.Attrs(f); err != nil {
			return err
		}
		if active, err = c.ActiveBlocks(f, 256, 0); err != nil {
			return err
		}
		if _, err := c.ActiveBlocks(f, 0, 0); err == nil {
			return errors.New("ActiveBlocks accepted a block of 0 threads")
		}
		dx, dout, err := alloc2(c, 8*n)
		if err != nil {
			return err
		}
		if err := c.HtoD(dx, Bytes(x)); err != nil {
			return err
		}
		cfg := LaunchConfig{Grid: Dim3{X: 64}, Block: Dim3{X: 256}}
		el, err = timed(c, func() error { return c.Launch(f, cfg, dout, dx, a, uint32(n), add) })
		return errors.Join(err, c.DtoH(Bytes(out), dout), c.Free(dx), c.Free(dout), c.Unload(m))
	}))
	t.Logf("axpy_u64 on %d elements: %v, %d registers", n, el, attrs.Registers)
	assert.Positive(t, attrs.Registers)
	// A 256-thread block of a small kernel: at least one, at most the
	// 2048 threads a multiprocessor holds.
	assert.True(t, active >= 1 && active <= 8, "active blocks per multiprocessor: %d", active)
	assert.GreaterOrEqual(t, attrs.MaxThreadsPerBlock, 256)
	assert.Positive(t, el)
	for i := range x {
		if want := a*x[i] + uint64(i) + 3; out[i] != want {
			t.Fatalf("out[%d] = %#x, want %#x", i, out[i], want)
		}
	}
}

// timed runs enqueue between the two events of a Timer on the default
// stream and returns the device time between them.
func timed(c *Ctx, enqueue func() error) (time.Duration, error) {
	tm, err := c.NewTimer()
	if err != nil {
		return 0, err
	}
	d, err := c.Time(tm, nil, enqueue)
	return d, errors.Join(err, c.FreeTimer(tm))
}

func TestGPUErrorsNameStepAndCode(t *testing.T) {
	d := gpu(t)
	ptx, err := os.ReadFile("testdata/axpy.ptx")
	require.NoError(t, err)
	var badImage, missing, bigBlock, oom error
	require.NoError(t, d.Do(func(c *Ctx) error {
		_, badImage = c.LoadModule([]byte("not a cuda image"))
		m, err := c.LoadModule(ptx)
		if err != nil {
			return err
		}
		_, missing = c.Function(m, "no_such_kernel")
		f, err := c.Function(m, "axpy_u64")
		if err != nil {
			return err
		}
		bigBlock = c.Launch(f, LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 4096}},
			DevicePtr(0), DevicePtr(0), uint64(0), uint32(0), float32(0))
		_, oom = c.Alloc(1 << 62)
		return c.Unload(m)
	}))
	t.Logf("bad image: %v", badImage)
	var e *Error
	require.ErrorAs(t, badImage, &e)
	assert.Contains(t, badImage.Error(), "cuModuleLoadData")
	assert.Contains(t, e.Name, "CUDA_ERROR_")
	assert.True(t, IsCode(missing, NotFound), "got %v", missing)
	assert.Contains(t, missing.Error(), "no_such_kernel")
	assert.Error(t, bigBlock, "a 4096-thread block must be refused")
	assert.True(t, IsCode(oom, OutOfMemory), "got %v", oom)
}

func TestGPUDynamicSharedOptIn(t *testing.T) {
	d := gpu(t)
	ptx, err := os.ReadFile("testdata/axpy.ptx")
	require.NoError(t, err)
	const big = 100 << 10 // above the 48 KiB default, below Hopper's 227 KiB opt-in
	if d.Info().SharedOptinBytes < big {
		t.Skipf("device allows only %d bytes of opt-in shared memory", d.Info().SharedOptinBytes)
	}
	var before, optIn, after error
	require.NoError(t, d.Do(func(c *Ctx) error {
		m, err := c.LoadModule(ptx)
		if err != nil {
			return err
		}
		f, err := c.Function(m, "axpy_u64")
		if err != nil {
			return err
		}
		cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 32}, SharedBytes: big}
		args := []any{DevicePtr(0), DevicePtr(0), uint64(0), uint32(0), float32(0)} // n = 0: touches no memory
		before = c.Launch(f, cfg, args...)
		optIn = c.SetMaxDynamicShared(f, big)
		after = c.Launch(f, cfg, args...)
		return errors.Join(c.Synchronize(), c.Unload(m))
	}))
	assert.Error(t, before, "100 KiB without opting in must be refused")
	assert.NoError(t, optIn)
	assert.NoError(t, after)
}

func TestGPUCtxBoundToDo(t *testing.T) {
	d := gpu(t)
	var kept *Ctx
	require.NoError(t, d.Do(func(c *Ctx) error { kept = c; return nil }))
	_, err := kept.Alloc(16)
	assert.ErrorIs(t, err, ErrCtxUnbound)

	err = d.Do(func(c *Ctx) error { panic("boom") })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "boom")
	assert.NoError(t, d.Do(func(c *Ctx) error { return c.Synchronize() }), "device must serve after a panic")
}

func TestGPUConcurrentDo(t *testing.T) {
	d := gpu(t)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = d.Do(func(c *Ctx) error { return echo(c, uint64(g)) })
		}()
	}
	wg.Wait()
	for g, err := range errs {
		assert.NoError(t, err, "goroutine %d", g)
	}
}

// echo round-trips v through device memory.
func echo(c *Ctx, v uint64) error {
	p, err := c.Alloc(1024)
	if err != nil {
		return err
	}
	var in, back [8]byte
	binary.LittleEndian.PutUint64(in[:], v)
	if err := errors.Join(c.HtoD(p, in[:]), c.DtoH(back[:], p), c.Free(p)); err != nil {
		return err
	}
	if back != in {
		return fmt.Errorf("echo %d: got %x", v, back)
	}
	return nil
}

func TestGPUCloseStopsDevice(t *testing.T) {
	gpu(t)
	d, err := Open(0)
	require.NoError(t, err)
	require.NoError(t, d.Do(func(c *Ctx) error { return c.Synchronize() }))
	require.NoError(t, d.Close())
	assert.NoError(t, d.Close(), "Close is idempotent")
	assert.ErrorIs(t, d.Do(func(c *Ctx) error { return nil }), ErrClosed)

	d2, err := Open(0)
	require.NoError(t, err)
	err = d2.Do(func(c *Ctx) error { runtime.Goexit(); return nil })
	assert.ErrorIs(t, err, ErrClosed, "Goexit in a callback stops the device and says so")
	assert.ErrorIs(t, d2.Do(func(c *Ctx) error { return nil }), ErrClosed)
	assert.NoError(t, d2.Close())

	_, err = Open(1 << 20)
	assert.ErrorIs(t, err, ErrNoDevice)
}
