// Package driver is cuzk's one door to the GPU: the CUDA driver API, opened
// at run time with dlopen("libcuda.so.1") through cgo.
//
// No CUDA header or toolkit is needed to build it, so every binary builds on
// any Linux machine. Where there is no driver, Init, Count and Open return
// errors matching ErrNoDriver; where the driver sees no GPU, ErrNoDevice.
// Callers test these with errors.Is and fall back or say so plainly.
//
// A CUDA context is bound to the OS thread that made it current, so each
// Device owns one goroutine locked to its thread, holding the device's
// primary context. All work is submitted to it with Device.Do, whose callback
// gets a *Ctx: memory, copies, modules, launches, streams and events are
// methods on Ctx and valid only inside that callback. Handles (DevicePtr,
// *Module, *Function, *Stream, *Event, *HostBuf) outlive the callback and may
// be used in later Do calls on the same device.
//
// Failed driver calls return *Error, which carries the step, the CUresult
// code and the driver's name for it, e.g.
// "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (200): device kernel image is invalid".
//
// It and internal/signals (a signal handler) are cuzk's only cgo; it imports only the standard library.
package driver
