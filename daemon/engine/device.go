package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Device is what a prover worker needs of the hardware it drives: one GPU,
// or the CPU backend. Prove is only called by the device's own worker, one
// call at a time; EvictKey may be called from any goroutine.
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

// CPUDevice proves on the CPU backend (gnark-crypto, every core). It is
// the device of a daemon with no GPU, and the reference.
type CPUDevice struct {
	name    string
	backend *cpu.Backend
}

// NewCPUDevice returns the CPU device, named name ("cpu" when empty).
func NewCPUDevice(name string) (*CPUDevice, error) {
	be, err := cpu.New()
	if err != nil {
		return nil, fmt.Errorf("cpu device: %w", err)
	}
	if name == "" {
		name = "cpu"
	}
	return &CPUDevice{name: name, backend: be}, nil
}

// Name implements Device.
func (d *CPUDevice) Name() string { return d.name }

// Prove implements Device.
func (d *CPUDevice) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	return proveOn(ctx, pk, asg, d.backend, rnd, nil)
}

// Resident implements Device: false, the CPU proves from host memory.
func (d *CPUDevice) Resident() bool { return false }

// Preload implements Device: the CPU proves from host memory.
func (d *CPUDevice) Preload(context.Context, *groth16.ProvingKey) error { return nil }

// EvictKey implements Device: the CPU holds no bases of its own.
func (d *CPUDevice) EvictKey(*groth16.ProvingKey) error { return nil }

// Recover implements Device: a CPU failure leaves nothing to restore.
func (d *CPUDevice) Recover(error) error { return nil }

// Close implements Device.
func (d *CPUDevice) Close() error { return nil }

// errDeviceDown means a device failed to recover and takes no more jobs.
var errDeviceDown = errors.New("device out of service")
