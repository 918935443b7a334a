package driver

import (
	"errors"
	"fmt"
)

// ErrNoGPU matches both ErrNoDriver and ErrNoDevice: nothing here can run
// GPU work. Callers that only need to know that (to skip, or to exit with
// "no GPU") test errors.Is(err, ErrNoGPU).
var ErrNoGPU = errors.New("cuda driver: no usable CUDA GPU")

// ErrNoDriver reports that libcuda.so.1 could not be opened or lacks an entry
// point this package needs: the machine has no (usable) NVIDIA driver.
var ErrNoDriver error = noGPU("cuda driver: libcuda.so.1 not available")

// ErrNoDevice reports that the driver is present but sees no CUDA device, or
// that the requested ordinal does not exist.
var ErrNoDevice error = noGPU("cuda driver: no CUDA device")

// noGPU is the type of ErrNoDriver and ErrNoDevice: each is itself and also
// ErrNoGPU under errors.Is.
type noGPU string

func (e noGPU) Error() string { return string(e) }

func (noGPU) Is(target error) bool { return target == ErrNoGPU }

// ErrClosed reports work submitted to a Device after Close.
var ErrClosed = errors.New("cuda driver: device closed")

// ErrCtxUnbound reports a Ctx used outside the Device.Do call that handed it
// out. A Ctx is only valid on the device's own OS thread, during that call.
var ErrCtxUnbound = errors.New("cuda driver: Ctx used outside Device.Do")

// ErrNotPinned reports an asynchronous copy whose host memory is not inside
// a live HostBuf of the same device.
var ErrNotPinned = errors.New("cuda driver: host memory is not pinned by this device")

// Result codes of the driver API that callers commonly act on (cuda.h,
// enum cudaError_enum).
const (
	Success            Result = 0
	InvalidValue       Result = 1
	OutOfMemory        Result = 2
	NotInitialized     Result = 3
	StubLibrary        Result = 34
	InsufficientDriver Result = 35
	NoDevice           Result = 100
	InvalidDevice      Result = 101
	InvalidImage       Result = 200
	InvalidContext     Result = 201
	NoBinaryForGPU     Result = 209
	UnsupportedPTXVers Result = 222
	NotFound           Result = 500
	IllegalAddress     Result = 700
	LaunchOutOfRes     Result = 701
	LaunchFailed       Result = 719
)

// Result is a CUresult code returned by the driver API.
type Result int

// Error is a failed driver API call: the step that failed, its CUresult code
// and the driver's name and description for it. Use errors.As to inspect it,
// or errors.Is against ErrNoDevice for code 100.
type Error struct {
	// Step names the API call (and any subject) that failed.
	Step string
	// Code is the CUresult the call returned.
	Code Result
	// Name is the driver's symbolic name, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
	Name string
	// Desc is the driver's one-line description of the code.
	Desc string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Step, e.Name, int(e.Code), e.Desc)
}

// Is lets errors.Is match the sentinels: ErrNoDevice for
// CUDA_ERROR_NO_DEVICE and CUDA_ERROR_INVALID_DEVICE, ErrNoDriver for
// CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda) and
// CUDA_ERROR_INSUFFICIENT_DRIVER.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNoDevice:
		return e.Code == NoDevice || e.Code == InvalidDevice
	case ErrNoDriver:
		return e.Code == StubLibrary || e.Code == InsufficientDriver
	case ErrNoGPU:
		return e.Is(ErrNoDevice) || e.Is(ErrNoDriver)
	}
	return false
}

// IsCode reports whether err wraps a driver Error with the given code.
func IsCode(err error, code Result) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
