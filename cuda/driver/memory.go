package driver

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// DevicePtr is an address in device memory. It stays valid across Do calls
// until freed, and may be passed between goroutines.
type DevicePtr uint64

// Add returns p advanced by off bytes.
func (p DevicePtr) Add(off int) DevicePtr { return p + DevicePtr(off) }

// Bytes views a slice of plain values (no Go pointers inside, e.g.
// fr.Element or uint32) as its raw bytes, for copies to and from the device.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// Alloc allocates n bytes of device memory (cuMemAlloc; 256-byte aligned).
func (c *Ctx) Alloc(n int) (DevicePtr, error) {
	if err := c.bound(); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, newError(fmt.Sprintf("cuMemAlloc %d bytes", n), InvalidValue)
	}
	var p C.CUdeviceptr
	if err := check(fmt.Sprintf("cuMemAlloc %d bytes", n), C.cuzk_mem_alloc(&p, C.size_t(n))); err != nil {
		return 0, err
	}
	return DevicePtr(p), nil
}

// Free releases memory from Alloc. Freeing 0 is a no-op.
func (c *Ctx) Free(p DevicePtr) error {
	if err := c.bound(); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	return check("cuMemFree", C.cuzk_mem_free(C.CUdeviceptr(p)))
}

// Memset sets n bytes at p to v.
func (c *Ctx) Memset(p DevicePtr, v byte, n int) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuMemsetD8", C.cuzk_memset8(C.CUdeviceptr(p), C.uchar(v), C.size_t(n)))
}

// Memset32 sets the n 32-bit words at p (4-byte aligned) to v. Like
// Memset, it does not wait for the device: it is ordered on the default
// stream.
func (c *Ctx) Memset32(p DevicePtr, v uint32, n int) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuMemsetD32", C.cuzk_memset32(C.CUdeviceptr(p), C.uint(v), C.size_t(n)))
}

// HtoD copies src to device memory at dst and waits for the copy.
func (c *Ctx) HtoD(dst DevicePtr, src []byte) error {
	if err := c.bound(); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	return check("cuMemcpyHtoD", C.cuzk_htod(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

// DtoH copies len(dst) bytes from device memory at src into dst and waits.
func (c *Ctx) DtoH(dst []byte, src DevicePtr) error {
	if err := c.bound(); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return check("cuMemcpyDtoH", C.cuzk_dtoh(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
}

// DtoD copies n bytes between device buffers and waits.
func (c *Ctx) DtoD(dst, src DevicePtr, n int) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuMemcpyDtoD", C.cuzk_dtod(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}

// HtoDAsync enqueues a copy of src to dst on stream s (nil: the default
// stream). src must lie inside a live HostBuf of this device, because the
// copy reads it after the call returns; otherwise ErrNotPinned.
func (c *Ctx) HtoDAsync(dst DevicePtr, src []byte, s *Stream) error {
	if err := c.bound(); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if !c.Pinned(src) {
		return fmt.Errorf("cuMemcpyHtoDAsync: %w", ErrNotPinned)
	}
	return check("cuMemcpyHtoDAsync", C.cuzk_htod_async(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), s.handle()))
}

// DtoHAsync enqueues a copy from src into dst on stream s. dst must lie
// inside a live HostBuf of this device; otherwise ErrNotPinned.
func (c *Ctx) DtoHAsync(dst []byte, src DevicePtr, s *Stream) error {
	if err := c.bound(); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if !c.Pinned(dst) {
		return fmt.Errorf("cuMemcpyDtoHAsync: %w", ErrNotPinned)
	}
	return check("cuMemcpyDtoHAsync", C.cuzk_dtoh_async(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst)), s.handle()))
}

// DtoDAsync enqueues a device-to-device copy of n bytes on stream s.
func (c *Ctx) DtoDAsync(dst, src DevicePtr, n int, s *Stream) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuMemcpyDtoDAsync", C.cuzk_dtod_async(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s.handle()))
}

// HostBuf is page-locked host memory (cuMemHostAlloc, portable), which the
// GPU reads and writes directly: the only host memory asynchronous copies
// accept. Its bytes may be filled and read by any goroutine while no copy
// into or out of them is in flight.
type HostBuf struct {
	p          unsafe.Pointer
	n          int
	registered bool // HostRegister's: the memory is the caller's
	adopted    bool // AdoptPinned's: registered by another device
}

// Bytes returns the buffer's memory. It is valid until HostFree.
func (h *HostBuf) Bytes() []byte { return unsafe.Slice((*byte)(h.p), h.n) }

// HostAlloc allocates n bytes of pinned host memory.
func (c *Ctx) HostAlloc(n int) (*HostBuf, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, newError(fmt.Sprintf("cuMemHostAlloc %d bytes", n), InvalidValue)
	}
	const portable = 1 // CU_MEMHOSTALLOC_PORTABLE
	var p unsafe.Pointer
	if err := check(fmt.Sprintf("cuMemHostAlloc %d bytes", n), C.cuzk_host_alloc(&p, C.size_t(n), portable)); err != nil {
		return nil, err
	}
	h := &HostBuf{p: p, n: n}
	c.pinned = append(c.pinned, h)
	return h, nil
}

// HostFree releases a HostBuf; its Bytes must not be used afterwards.
func (c *Ctx) HostFree(h *HostBuf) error {
	if err := c.bound(); err != nil {
		return err
	}
	for i, b := range c.pinned {
		if b == h {
			if b.registered {
				return fmt.Errorf("cuMemFreeHost of registered memory: %w", ErrNotPinned)
			}
			c.pinned = append(c.pinned[:i], c.pinned[i+1:]...)
			err := check("cuMemFreeHost", C.cuzk_host_free(h.p))
			h.p, h.n = nil, 0
			return err
		}
	}
	return fmt.Errorf("cuMemFreeHost: %w", ErrNotPinned)
}

// HostRegister page-locks memory the caller owns (cuMemHostRegister,
// portable), so that copies from and to it run by DMA like HostAlloc's.
// b must stay allocated, and must not be moved, until HostUnregister; the
// registration ends with the context too, after which b is plain memory
// again (copies still work, staged). The returned HostBuf is b.
func (c *Ctx) HostRegister(b []byte) (*HostBuf, error) { return c.hostRegister(b, 0) }

// HostRegisterReadOnly is HostRegister for memory the device only reads
// (CU_MEMHOSTREGISTER_READ_ONLY): a read-only mapping, such as a key file
// mapped with PROT_READ, which a plain registration refuses. Copies to the
// device read it by DMA; nothing may copy into it.
func (c *Ctx) HostRegisterReadOnly(b []byte) (*HostBuf, error) {
	const readOnly = 8 // CU_MEMHOSTREGISTER_READ_ONLY
	return c.hostRegister(b, readOnly)
}

func (c *Ctx) hostRegister(b []byte, flags C.uint) (*HostBuf, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, newError("cuMemHostRegister 0 bytes", InvalidValue)
	}
	const portable = 1 // CU_MEMHOSTREGISTER_PORTABLE
	p := unsafe.Pointer(&b[0])
	if err := check(fmt.Sprintf("cuMemHostRegister %d bytes", len(b)), C.cuzk_host_register(p, C.size_t(len(b)), portable|flags)); err != nil {
		return nil, err
	}
	h := &HostBuf{p: p, n: len(b), registered: true}
	c.pinned = append(c.pinned, h)
	return h, nil
}

// AdoptPinned records b, page-locked by another device's HostRegister
// (portable registrations are pinned for every context), as pinned here
// too, so this device's asynchronous copies accept it. It calls nothing in
// the driver; HostUnregister of the returned HostBuf only forgets it. The
// registering device must unregister b after every adopter has forgotten it.
func (c *Ctx) AdoptPinned(b []byte) (*HostBuf, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, newError("adopt 0 bytes of pinned memory", InvalidValue)
	}
	h := &HostBuf{p: unsafe.Pointer(&b[0]), n: len(b), registered: true, adopted: true}
	c.pinned = append(c.pinned, h)
	return h, nil
}

// HostUnregister ends a HostRegister (or forgets an AdoptPinned); the
// memory stays the caller's.
func (c *Ctx) HostUnregister(h *HostBuf) error {
	if err := c.bound(); err != nil {
		return err
	}
	for i, b := range c.pinned {
		if b == h && b.registered {
			c.pinned = append(c.pinned[:i], c.pinned[i+1:]...)
			var err error
			if !h.adopted {
				err = check("cuMemHostUnregister", C.cuzk_host_unregister(h.p))
			}
			h.p, h.n = nil, 0
			return err
		}
	}
	return fmt.Errorf("cuMemHostUnregister: %w", ErrNotPinned)
}

// Pinned reports whether b (non-empty) lies inside one buffer from this
// device's HostAlloc or HostRegister: the memory asynchronous copies accept, which a copy
// can move by DMA without staging.
func (c *Ctx) Pinned(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	hi := lo + uintptr(len(b))
	for _, h := range c.pinned {
		base := uintptr(h.p)
		if lo >= base && hi <= base+uintptr(h.n) {
			return true
		}
	}
	return false
}
