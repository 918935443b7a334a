package engine

import (
	"context"
	"errors"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Device is what a prover worker needs of the hardware it drives: one GPU,
// or the CPU backend (daemon/device makes both; the engine knows them only
// through this interface and the capabilities beside it, found by type
// assertion). Prove is only called by the device's own worker, one call at
// a time; EvictKey may be called from any goroutine.
type Device interface {
	// Name identifies the device in results, logs and metrics ("gpu0 NVIDIA H200", "cpu").
	Name() string
	// Prove makes one proof. It stops at the next stage boundary once ctx
	// is done, and reports its phases to the trace in ctx
	// (groth16.ContextTrace).
	Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error)
	// Resident reports whether the device keeps keys' bases in its own
	// memory across jobs (a GPU does; the CPU proves from host memory).
	Resident() bool
	// Preload makes pk's bases resident on the device.
	Preload(ctx context.Context, pk *groth16.ProvingKey) error
	// EvictKey frees pk's bases if the device holds them.
	EvictKey(pk *groth16.ProvingKey) error
	// Recover is called after Prove failed with err; it restores the device
	// for the next job (a GPU re-creates its context when the driver
	// requires). An error from Recover takes the device out of service.
	Recover(err error) error
	// Close frees the device's resources.
	Close() error
}

// KeyPlanner is a device that plans how each key it holds uses its memory
// (a GPU: gpu.Backend.PlanKey). The engine logs the plan of each key it
// preloads, shows it in Status, and leaves the host copy of a key the
// device streams in part (keys.Manager.MarkHotStreaming).
type KeyPlanner interface {
	// KeyPlan returns pk's plan on the device, made at its Preload, while
	// the device holds pk.
	KeyPlan(pk *groth16.ProvingKey) (KeyPlan, bool)
}

// KeyPlan is a device's plan for one key: the bytes of its bases resident
// on the device and those streamed to it for each proof, the most device
// memory a proof holds, whether every set is resident with every MSM in one
// pass (Whole), and the plan in words. prover/gpu's KeyPlan has these
// methods. It is an alias of an interface literal, so that a device package
// declares the same type and implements KeyPlanner without importing the
// engine, and the engine's tests may use real devices.
type KeyPlan = interface {
	ResidentBytes() int64
	StreamedBytes() int64
	Peak() int64
	Whole() bool
	String() string
}

// QuotientPrefetcher is a device that sends the first vector of the next
// proof's quotient (its A evaluations) to the device beside the current
// proof's last MSMs, when the link would otherwise idle
// (gpu.Backend.PrefetchQuotient). Once a proof's quotient is done, its
// worker gives the device a source of that vector; the device asks it
// beside each MSM chunk with link room until it answers, and the source
// takes the job to prove next, once one is ready, and answers its vector.
// The source runs on the device's own thread and calls nothing of the
// device. nil drops what was given or sent and waits for its upload. The
// worker drops it before an announced job's vectors can go back, and
// whenever that job is not the next it proves. Called only by the device's
// worker.
type QuotientPrefetcher interface {
	PrefetchQuotient(ctx context.Context, next func() []fr.Element) error
}

// errDeviceDown means a device failed to recover and takes no more jobs.
var errDeviceDown = errors.New("engine: device out of service")
