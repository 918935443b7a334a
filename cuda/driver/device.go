package driver

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Device attribute codes (cuda.h, enum CUdevice_attribute).
const (
	attrMaxThreadsPerBlock = 1
	attrClockRate          = 13
	attrMultiprocessors    = 16
	attrPCIBusID           = 33
	attrMemoryClockRate    = 36
	attrMemoryBusWidth     = 37
	attrL2CacheSize        = 38
	attrCCMajor            = 75
	attrCCMinor            = 76
	attrSharedOptin        = 97
)

// Info describes a device. It is read once when the device is opened.
type Info struct {
	Ordinal            int
	Name               string
	Major, Minor       int   // compute capability
	TotalMemory        int64 // bytes
	Multiprocessors    int
	MaxThreadsPerBlock int
	L2CacheBytes       int
	SharedOptinBytes   int // largest dynamic shared memory a block can opt into
	ClockKHz           int
	MemoryClockKHz     int
	MemoryBusBits      int
	PCIBus             int
}

// CC returns the compute capability as "major.minor".
func (i Info) CC() string { return fmt.Sprintf("%d.%d", i.Major, i.Minor) }

// Arch returns the SASS architecture name, e.g. "sm_90".
func (i Info) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

// String is a one-line description for logs and reports.
func (i Info) String() string {
	return fmt.Sprintf("GPU %d: %s (sm_%d%d, %d SMs, %.1f GiB)", i.Ordinal, i.Name, i.Major, i.Minor,
		i.Multiprocessors, float64(i.TotalMemory)/(1<<30))
}

// Device is one GPU with its primary context, served by a single goroutine
// locked to its OS thread: the CUDA context is bound to a thread, so every
// driver call for this device runs there. Submit work with Do. A Device is
// safe for concurrent use; submissions run one at a time in arrival order.
type Device struct {
	info Info
	dev  C.CUdevice
	ctx  C.CUcontext

	jobs chan job
	quit chan struct{}
	done chan struct{}

	closeOnce sync.Once
	closeErr  error

	c Ctx // handed to each Do callback; only touched on the device thread
}

type job struct {
	fn  func(*Ctx) error
	res chan error
}

// Open initializes the driver, retains the primary context of the device
// with the given ordinal and starts its thread. Close releases them.
func Open(ordinal int) (*Device, error) {
	n, err := Count()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("open device %d of %d: %w", ordinal, n, ErrNoDevice)
	}
	d := &Device{jobs: make(chan job), quit: make(chan struct{}), done: make(chan struct{})}
	d.c.dev = d
	started := make(chan error, 1)
	go d.loop(ordinal, started)
	if err := <-started; err != nil {
		return nil, fmt.Errorf("open device %d: %w", ordinal, err)
	}
	return d, nil
}

// Info returns the device's description. Safe for concurrent use.
func (d *Device) Info() Info { return d.info }

// Do runs fn on the device's thread with the device's context current and
// returns fn's error. A panic in fn is recovered and returned as an error so
// the device keeps serving; runtime.Goexit in fn (t.FailNow, say) stops the
// device. fn must not call Do on the same device (that would deadlock) and
// must not keep c after returning.
func (d *Device) Do(fn func(c *Ctx) error) error {
	j := job{fn: fn, res: make(chan error, 1)}
	select {
	case d.jobs <- j:
	case <-d.quit:
		return ErrClosed
	case <-d.done:
		return ErrClosed
	}
	return <-j.res
}

// Close stops the device thread after the work in progress and releases the
// primary context. Memory, modules, streams and events still allocated then
// are released with the context only if no other user of the primary context
// remains. Close is idempotent and safe for concurrent use.
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		close(d.quit)
		<-d.done
	})
	return d.closeErr
}

func (d *Device) loop(ordinal int, started chan<- error) {
	runtime.LockOSThread()
	// The thread stays locked: it exits with this goroutine, taking any
	// thread-bound driver state with it.
	defer close(d.done)
	if err := d.start(ordinal); err != nil {
		started <- err
		return
	}
	defer func() {
		d.closeErr = check("cuDevicePrimaryCtxRelease", C.cuzk_primary_release(d.dev))
	}()
	started <- nil
	for {
		select {
		case j := <-d.jobs:
			d.run(j)
		case <-d.quit:
			return
		}
	}
}

// run calls j.fn and always answers j: with fn's error, with a recovered
// panic (the device keeps serving), or, when fn calls runtime.Goexit, with
// ErrClosed while the device thread winds down.
func (d *Device) run(j job) {
	returned := false
	d.c.live.Store(true)
	defer func() {
		d.c.live.Store(false)
		if returned {
			return
		}
		if p := recover(); p != nil {
			j.res <- fmt.Errorf("device %d: panic in Do: %v", d.info.Ordinal, p)
			return
		}
		j.res <- fmt.Errorf("device %d: Do callback called runtime.Goexit: %w", d.info.Ordinal, ErrClosed)
	}()
	err := j.fn(&d.c)
	returned = true
	j.res <- err
}

func (d *Device) start(ordinal int) error {
	if err := check("cuDeviceGet", C.cuzk_device_get(&d.dev, C.int(ordinal))); err != nil {
		return err
	}
	if err := check("cuDevicePrimaryCtxRetain", C.cuzk_primary_retain(&d.ctx, d.dev)); err != nil {
		return err
	}
	if err := check("cuCtxSetCurrent", C.cuzk_ctx_set_current(d.ctx)); err != nil {
		C.cuzk_primary_release(d.dev) // the set-current error is the one to report
		return err
	}
	info, err := d.query(ordinal)
	if err != nil {
		C.cuzk_primary_release(d.dev) // the query error is the one to report
		return err
	}
	d.info = info
	return nil
}

func (d *Device) query(ordinal int) (Info, error) {
	info := Info{Ordinal: ordinal}
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.cuzk_device_name(&buf[0], C.int(len(buf)), d.dev)); err != nil {
		return info, err
	}
	info.Name = C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
	var total C.size_t
	if err := check("cuDeviceTotalMem", C.cuzk_device_total_mem(&total, d.dev)); err != nil {
		return info, err
	}
	info.TotalMemory = int64(total)
	attrs := []struct {
		code int
		dst  *int
	}{
		{attrCCMajor, &info.Major}, {attrCCMinor, &info.Minor},
		{attrMultiprocessors, &info.Multiprocessors}, {attrMaxThreadsPerBlock, &info.MaxThreadsPerBlock},
		{attrL2CacheSize, &info.L2CacheBytes}, {attrSharedOptin, &info.SharedOptinBytes},
		{attrClockRate, &info.ClockKHz}, {attrMemoryClockRate, &info.MemoryClockKHz},
		{attrMemoryBusWidth, &info.MemoryBusBits}, {attrPCIBusID, &info.PCIBus},
	}
	for _, a := range attrs {
		var v C.int
		if err := check(fmt.Sprintf("cuDeviceGetAttribute(%d)", a.code), C.cuzk_device_attr(&v, C.int(a.code), d.dev)); err != nil {
			return info, err
		}
		*a.dst = int(v)
	}
	return info, nil
}

// Ctx is the handle to a device's context inside Device.Do. Its methods run
// driver calls on the device thread; they return ErrCtxUnbound when the Ctx
// is used after its Do call returned. Not safe for use by other goroutines.
type Ctx struct {
	dev    *Device
	live   atomic.Bool
	pinned []*HostBuf
}

// Device returns the device this context belongs to.
func (c *Ctx) Device() *Device { return c.dev }

// Synchronize waits for all work on the device (cuCtxSynchronize).
func (c *Ctx) Synchronize() error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.cuzk_ctx_synchronize())
}

// MemInfo returns the device's free and total memory in bytes.
func (c *Ctx) MemInfo() (free, total int64, err error) {
	if err := c.bound(); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := check("cuMemGetInfo", C.cuzk_mem_info(&f, &t)); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}

func (c *Ctx) bound() error {
	if !c.live.Load() {
		return ErrCtxUnbound
	}
	return nil
}
