package driver

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Function attribute codes (cuda.h, enum CUfunction_attribute).
const (
	funcMaxThreadsPerBlock = 0
	funcSharedSizeBytes    = 1
	funcLocalSizeBytes     = 3
	funcNumRegs            = 4
	funcMaxDynamicShared   = 8
)

// maxArgs matches CUZK_MAX_ARGS in shim.c.
const maxArgs = 64

// Module is a loaded code image (fatbin, cubin or PTX) in a device context.
type Module struct{ h C.CUmodule }

// Function is a kernel of a loaded Module.
type Function struct {
	h    C.CUfunction
	name string
}

// Name returns the kernel's symbol name.
func (f *Function) Name() string { return f.name }

// FuncAttrs are a kernel's compiled resource needs.
type FuncAttrs struct {
	MaxThreadsPerBlock int
	Registers          int // per thread
	StaticSharedBytes  int
	LocalBytes         int // per thread; >0 means spills or local arrays
}

// LoadModule loads a code image from memory (cuModuleLoadData): a fatbin,
// a cubin or PTX text. The bytes are copied to C memory first, NUL-terminated
// (PTX must be) and aligned whatever the Go slice's address.
func (c *Ctx) LoadModule(image []byte) (*Module, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	if len(image) == 0 {
		return nil, newError("cuModuleLoadData: empty image", InvalidImage)
	}
	buf := C.calloc(C.size_t(len(image)+1), 1)
	if buf == nil {
		return nil, fmt.Errorf("cuModuleLoadData: calloc %d bytes failed", len(image)+1)
	}
	defer C.free(buf)
	C.memcpy(buf, unsafe.Pointer(&image[0]), C.size_t(len(image)))
	m := &Module{}
	if err := check("cuModuleLoadData", C.cuzk_module_load(&m.h, buf)); err != nil {
		return nil, err
	}
	return m, nil
}

// Unload releases a module; its functions must not be launched afterwards.
func (c *Ctx) Unload(m *Module) error {
	if err := c.bound(); err != nil {
		return err
	}
	return check("cuModuleUnload", C.cuzk_module_unload(m.h))
}

// Function looks up an extern "C" kernel by name.
func (c *Ctx) Function(m *Module, name string) (*Function, error) {
	if err := c.bound(); err != nil {
		return nil, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	f := &Function{name: name}
	if err := check("cuModuleGetFunction "+name, C.cuzk_module_function(&f.h, m.h, cname)); err != nil {
		return nil, err
	}
	return f, nil
}

// Attrs returns the kernel's register count, shared and local memory use.
func (c *Ctx) Attrs(f *Function) (FuncAttrs, error) {
	var a FuncAttrs
	if err := c.bound(); err != nil {
		return a, err
	}
	for _, q := range []struct {
		code int
		dst  *int
	}{
		{funcMaxThreadsPerBlock, &a.MaxThreadsPerBlock}, {funcNumRegs, &a.Registers},
		{funcSharedSizeBytes, &a.StaticSharedBytes}, {funcLocalSizeBytes, &a.LocalBytes},
	} {
		var v C.int
		if err := check("cuFuncGetAttribute "+f.name, C.cuzk_func_attr(&v, C.int(q.code), f.h)); err != nil {
			return a, err
		}
		*q.dst = int(v)
	}
	return a, nil
}

// ActiveBlocks returns how many blocks of f, of blockThreads threads and
// dynShared bytes of dynamic shared memory each, one multiprocessor runs at
// once (cuOccupancyMaxActiveBlocksPerMultiprocessor): the limit its
// registers, shared memory and block size leave.
func (c *Ctx) ActiveBlocks(f *Function, blockThreads, dynShared int) (int, error) {
	if err := c.bound(); err != nil {
		return 0, err
	}
	if blockThreads < 1 || dynShared < 0 {
		return 0, fmt.Errorf("active blocks of %s: block of %d threads, %d bytes dynamic shared memory", f.name, blockThreads, dynShared)
	}
	var n C.int
	if err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor "+f.name,
		C.cuzk_active_blocks(&n, f.h, C.int(blockThreads), C.size_t(dynShared))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// SetMaxDynamicShared lets f's launches ask for up to bytes of dynamic
// shared memory; above 48 KiB a kernel must opt in this way, up to
// Info.SharedOptinBytes (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
func (c *Ctx) SetMaxDynamicShared(f *Function, bytes int) error {
	if err := c.bound(); err != nil {
		return err
	}
	step := fmt.Sprintf("cuFuncSetAttribute %s max dynamic shared %d bytes", f.name, bytes)
	return check(step, C.cuzk_func_set_attr(f.h, funcMaxDynamicShared, C.int(bytes)))
}

// Dim3 is a grid or block shape; zero components count as 1.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) norm() Dim3 {
	for _, v := range []*uint32{&d.X, &d.Y, &d.Z} {
		if *v == 0 {
			*v = 1
		}
	}
	return d
}

// LaunchConfig shapes a kernel launch.
type LaunchConfig struct {
	Grid, Block Dim3
	SharedBytes int     // dynamic shared memory per block
	Stream      *Stream // nil: the default stream
}

// Raw is a kernel parameter passed by value as raw bytes (a C struct).
type Raw []byte

// Launch enqueues kernel f. Each argument is one kernel parameter, in order:
// DevicePtr, uint32, int32, uint64, int64, float32, float64, or Raw. Plain
// int is rejected so that a parameter's width is always explicit.
func (c *Ctx) Launch(f *Function, cfg LaunchConfig, args ...any) error {
	if err := c.bound(); err != nil {
		return err
	}
	buf, offs, err := packArgs(args)
	if err != nil {
		return fmt.Errorf("cuLaunchKernel %s: %w", f.name, err)
	}
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	var bufp unsafe.Pointer
	var offp *C.int
	if len(offs) > 0 {
		bufp, offp = unsafe.Pointer(&buf[0]), &offs[0]
	}
	r := C.cuzk_launch(f.h, C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(cfg.SharedBytes), cfg.Stream.handle(), bufp, offp, C.int(len(offs)))
	return check("cuLaunchKernel "+f.name, r)
}

// packArgs lays the arguments out in one buffer, each at an 8-byte aligned
// offset, for cuzk_launch to point the kernel parameter array into.
func packArgs(args []any) ([]byte, []C.int, error) {
	if len(args) > maxArgs {
		return nil, nil, fmt.Errorf("%d parameters, at most %d", len(args), maxArgs)
	}
	var buf []byte
	offs := make([]C.int, 0, len(args))
	for i, a := range args {
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
		offs = append(offs, C.int(len(buf)))
		var err error
		if buf, err = appendArg(buf, a); err != nil {
			return nil, nil, fmt.Errorf("parameter %d: %w", i, err)
		}
	}
	return buf, offs, nil
}

func appendArg(buf []byte, a any) ([]byte, error) {
	le := binary.LittleEndian
	switch v := a.(type) {
	case DevicePtr:
		return le.AppendUint64(buf, uint64(v)), nil
	case uint64:
		return le.AppendUint64(buf, v), nil
	case int64:
		return le.AppendUint64(buf, uint64(v)), nil
	case uint32:
		return le.AppendUint32(buf, v), nil
	case int32:
		return le.AppendUint32(buf, uint32(v)), nil
	case float32:
		return le.AppendUint32(buf, math.Float32bits(v)), nil
	case float64:
		return le.AppendUint64(buf, math.Float64bits(v)), nil
	case Raw:
		if len(v) == 0 {
			return nil, fmt.Errorf("empty Raw")
		}
		return append(buf, v...), nil
	default:
		return nil, fmt.Errorf("unsupported type %T (use DevicePtr, uint32, int32, uint64, int64, float32, float64 or Raw)", a)
	}
}
