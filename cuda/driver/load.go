package driver

/*
#cgo CFLAGS: -O2 -std=c11 -Wall
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// libcuda is the driver library's soname, as NVIDIA's driver installs it.
const libcuda = "libcuda.so.1"

// initOnce loads the driver and calls cuInit once per process.
var initOnce = sync.OnceValue(func() error {
	if err := load(libcuda); err != nil {
		return err
	}
	return check("cuInit", C.cuzk_init())
})

// load opens lib and resolves the entry points; errors wrap ErrNoDriver.
func load(lib string) error {
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	var what *C.char
	switch C.cuzk_load(clib, &what) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: dlopen: %s", ErrNoDriver, C.GoString(what))
	default:
		return fmt.Errorf("%w: dlsym %s: missing in %s", ErrNoDriver, C.GoString(what), lib)
	}
}

// Init loads the driver and initializes it. It is safe to call from any
// goroutine, any number of times; the work happens once per process and its
// error is sticky. It returns an error wrapping ErrNoDriver when libcuda.so.1
// is missing and one matching ErrNoDevice when the driver sees no device.
func Init() error { return initOnce() }

// Version returns the driver's CUDA version, e.g. 13000 for CUDA 13.0.
func Version() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cuDriverGetVersion", C.cuzk_driver_version(&v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Count returns the number of CUDA devices. It returns 0 and an error
// matching ErrNoDriver or ErrNoDevice where there are none.
func Count() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.cuzk_device_count(&n)); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, ErrNoDevice
	}
	return int(n), nil
}

// check turns a CUresult into nil or an *Error naming step.
func check(step string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return newError(step, Result(r))
}

func newError(step string, code Result) *Error {
	e := &Error{Step: step, Code: code, Name: "CUDA_ERROR_UNKNOWN_CODE", Desc: "unknown error code"}
	var s *C.char
	if C.cuzk_error_name(C.CUresult(code), &s) == 0 && s != nil {
		e.Name = C.GoString(s)
	}
	if C.cuzk_error_string(C.CUresult(code), &s) == 0 && s != nil {
		e.Desc = C.GoString(s)
	}
	return e
}
