package gpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// ErrNotHostBuffer reports a FreeHost of memory that AllocHost did not
// return (or that was freed already).
var ErrNotHostBuffer = errors.New("gpu: not a buffer from AllocHost")

// AllocHost returns n bytes of pinned (page-locked) host memory on the
// Backend's device, for vectors that cross the PCIe link on every proof
// (groth16.NewWorkspace takes the Backend as its allocator). Uploads from and
// downloads into it go straight by DMA, about 55 GB/s on an H200 host against
// about 33 GB/s through the staging chunks (docs/perf.md). Pinned memory
// cannot be paged out: it counts fully against the host's RAM while held.
// The bytes are not cleared. The memory stays valid until FreeHost or Close.
func (b *Backend) AllocHost(n int) ([]byte, error) {
	var out []byte
	err := b.dev.Do(func(c *driver.Ctx) error {
		h, err := c.HostAlloc(n)
		if err != nil {
			return err
		}
		out = h.Bytes()
		b.st.host[unsafe.SliceData(out)] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: pinned host memory of %d bytes: %w", n, err)
	}
	return out, nil
}

// FreeHost releases a buffer from AllocHost, given as AllocHost returned it
// (or any slice starting at its first byte).
func (b *Backend) FreeHost(p []byte) error {
	return b.dev.Do(func(c *driver.Ctx) error {
		key := unsafe.SliceData(p)
		h, ok := b.st.host[key]
		if !ok || len(p) == 0 {
			return fmt.Errorf("gpu: free host memory at %p: %w", key, ErrNotHostBuffer)
		}
		delete(b.st.host, key)
		return c.HostFree(h)
	})
}

// freeHost releases every buffer from AllocHost that is still held.
func (st *state) freeHost(c *driver.Ctx) error {
	var errs []error
	for k, h := range st.host {
		errs = append(errs, c.HostFree(h))
		delete(st.host, k)
	}
	return errors.Join(errs...)
}

// PinHost page-locks memory the caller owns (driver.Ctx.HostRegister), so
// that vectors solved into it go up and down by DMA like AllocHost's. p
// must stay allocated until UnpinHost or Close, which unpins it and leaves
// the memory to the caller. Go heap memory must not be given: use memory
// outside it (internal/hostmem).
func (b *Backend) PinHost(p []byte) error {
	return b.registerHost(p, (*driver.Ctx).HostRegister, "pin")
}

// AdoptHost makes p, pinned by another Backend's PinHost (on another
// GPU), count as pinned on this one too (driver.Ctx.AdoptPinned: portable
// registrations serve every context). UnpinHost forgets it; it must come
// before the other Backend's UnpinHost.
func (b *Backend) AdoptHost(p []byte) error {
	return b.registerHost(p, (*driver.Ctx).AdoptPinned, "adopt")
}

// registerHost records p in the Backend's registrations through reg.
func (b *Backend) registerHost(p []byte, reg func(*driver.Ctx, []byte) (*driver.HostBuf, error), what string) error {
	err := b.dev.Do(func(c *driver.Ctx) error {
		h, err := reg(c, p)
		if err != nil {
			return err
		}
		b.st.registered[unsafe.SliceData(p)] = h
		return nil
	})
	if err != nil {
		return fmt.Errorf("gpu: %s %d bytes of host memory: %w", what, len(p), err)
	}
	return nil
}

// UnpinHost ends a PinHost of p (as PinHost was given it), or an AdoptHost. Memory the
// Backend no longer holds pinned (after a Close) is not an error.
func (b *Backend) UnpinHost(p []byte) error {
	return b.dev.Do(func(c *driver.Ctx) error {
		key := unsafe.SliceData(p)
		h, ok := b.st.registered[key]
		if !ok {
			return nil
		}
		delete(b.st.registered, key)
		return c.HostUnregister(h)
	})
}

// unpinHost ends every PinHost still in force.
func (st *state) unpinHost(c *driver.Ctx) error {
	var errs []error
	for k, h := range st.registered {
		errs = append(errs, c.HostUnregister(h))
		delete(st.registered, k)
	}
	return errors.Join(errs...)
}
