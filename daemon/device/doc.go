// Package device is the hardware the daemon proves on: the CPU backend
// (CPU) and the GPUs (GPU, opened with OpenGPUs), each an engine.Device,
// and the pinned host memory the engine solves jobs into (VectorPool, an
// engine.VectorPool).
// A GPU keeps keys' bases resident across jobs (Preload plans each key on
// its memory first: KeyPlan), proves with its host scratch in a workspace of
// pinned memory, pins host memory it does not own (PinHost, AdoptHost: a
// HostPinner), re-creates its context after a fault (Recover), and runs a
// development setup's fixed-base multiplications (groth16.FixedBaser).
// A VectorPool makes the solved vectors outside the Go heap and has its
// devices that are HostPinners pin them, again after one recovers.
//
// The package implements the engine's interfaces without importing the
// engine: the scheduler knows no hardware, and daemon/assembly hands it the
// devices it opens and the pool over them.
package device
