package device

import (
	"context"
	"fmt"
	"io"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// CPU proves on the CPU backend (gnark-crypto, every core). It is the
// device of a daemon with no GPU, and the reference.
type CPU struct {
	name    string
	backend *cpu.Backend
}

// NewCPU returns the CPU device, named name ("cpu" when empty).
func NewCPU(name string) (*CPU, error) {
	be, err := cpu.New()
	if err != nil {
		return nil, fmt.Errorf("cpu device: %w", err)
	}
	if name == "" {
		name = "cpu"
	}
	return &CPU{name: name, backend: be}, nil
}

// Name implements engine.Device.
func (d *CPU) Name() string { return d.name }

// Prove implements engine.Device.
func (d *CPU) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	return proveOn(ctx, pk, asg, d.backend, rnd, nil)
}

// Resident implements engine.Device: false, the CPU proves from host memory.
func (d *CPU) Resident() bool { return false }

// Preload implements engine.Device: the CPU proves from host memory.
func (d *CPU) Preload(context.Context, *groth16.ProvingKey) error { return nil }

// EvictKey implements engine.Device: the CPU holds no bases of its own.
func (d *CPU) EvictKey(*groth16.ProvingKey) error { return nil }

// Recover implements engine.Device: a CPU failure leaves nothing to restore.
func (d *CPU) Recover(error) error { return nil }

// Close implements engine.Device.
func (d *CPU) Close() error { return nil }
