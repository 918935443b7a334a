// Package engine runs proof jobs: a bounded priority queue (CRITICAL >
// HIGH > NORMAL > LOW, first in first out within a priority), a pool of
// synthesis workers (circuit → witness and a/b/c, on the CPU) and one
// prover worker per device, joined by a bounded hand-off so that the
// synthesis of later jobs overlaps the proving of the current one, while a
// full hand-off holds synthesis back (backpressure).
//
// Synthesized jobs hold host memory until their proof is done; the engine
// budgets it: a job that does not fit waits, one that can never fit fails
// with an error saying so. Keys come from daemon/keys; a prover worker
// prefers jobs whose key is already resident on its device.
//
// Every job can be cancelled wherever it is (queued, synthesizing, waiting
// for a device, proving); a failure of one job (bad input, synthesis, a
// device fault) fails that job only, with the step in its error, and the
// worker goes on (a device is asked to recover after a fault). The engine
// is safe for concurrent use.
//
// The engine schedules; it knows no hardware and holds no memory of its
// own outside the Go heap. A device is a Device, with the capability the
// engine looks for by type assertion beside it (KeyPlanner); the vectors
// jobs solve into come from a VectorPool, which pins them for the devices.
// daemon/device makes the CPU and GPU devices and the pool, and
// daemon/assembly hands them to New.
package engine
