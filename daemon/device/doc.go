// Package device is the hardware the daemon proves on: the CPU backend
// (CPU) and the GPUs (GPU, opened with OpenGPUs), each an engine.Device.
// A GPU keeps keys' bases resident across jobs (Preload plans each key on
// its memory first: KeyPlan), proves with its host scratch in a workspace of
// pinned memory, pins host memory the engine solves into (PinHost,
// AdoptHost), re-creates its context after a fault (Recover), and runs a
// development setup's fixed-base multiplications (groth16.FixedBaser).
//
// The package implements the engine's interfaces without importing the
// engine: the scheduler knows no hardware, and daemon/assembly hands it the
// devices it opens.
package device
