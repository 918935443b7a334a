package gpubench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// ProveConfig configures the prove benchmark on one backend.
type ProveConfig struct {
	Runs      int    // timed proofs, after one warm-up
	Seed      uint64 // of each run's blinding r, s (devkeys.Rand(Seed, run+1))
	Pinned    bool   // the GPU backend's workspace and synthesis vectors in pinned host memory
	HOnDevice bool   // the GPU backend's fused quotient and L‖H call
}

// BackendResult is what one backend's runs measured. Run 0 is the warm-up:
// its proof is verified and compared but its times are not kept.
type BackendResult struct {
	Name        string
	Unavailable string // why the backend did not run ("no GPU"), else ""
	Synth       Samples
	Prove       Samples
	Overlapped  Samples // groth16.Prove on the bare backend: its calls overlap, as in a daemon
	// SameOverlapped counts overlapped proofs equal to their timed run's.
	SameOverlapped int
	Verify         Samples
	Phases         PhaseSamples
	Points         [NumPhases]int // each phase's size in the last run; 0: not run
	Proofs         [][]byte
	Failed         []string             // runs whose proof did not verify
	Witness        benchinput.WireShare // the warm-up's wire values
}

// Ran reports whether the backend ran (r may be nil).
func (r *BackendResult) Ran() bool { return r != nil && r.Unavailable == "" }

// Totals returns synthesis + prove per run.
func (r *BackendResult) Totals() Samples {
	out := make(Samples, len(r.Synth))
	for i := range out {
		out[i] = r.Synth[i] + r.Prove[i]
	}
	return out
}

// RunBackend proves with the backend named name ("cpu" or "gpu", GPU 0);
// the error matches ErrNoGPU when the GPU backend cannot run here.
func RunBackend(ctx context.Context, name string, cfg ProveConfig, c *porep.Circuit, sys *r1cs.System,
	pk *groth16.ProvingKey, vk *groth16.VerifyingKey) (*BackendResult, error) {
	if name == "cpu" {
		be, err := cpu.New()
		if err != nil {
			return nil, err
		}
		return BenchBackend(ctx, name, be, cfg, c, sys, pk, vk)
	}
	dev, err := OpenGPU()
	if err != nil {
		return nil, err
	}
	defer dev.Close() // after the backend's resources; its error changes no result
	be, err := gpu.New(dev)
	if err != nil {
		return nil, err
	}
	res, err := BenchBackend(ctx, name, be, cfg, c, sys, pk, vk)
	return res, errors.Join(err, be.Close())
}

// BenchBackend runs one warm-up and cfg.Runs timed proofs on be, then the
// timed runs again with the backend's calls overlapping. The proofs share
// one groth16.Workspace and one Synthesizer, as a daemon's worker proving
// one key after another would: from be's host memory when it has its own
// (the GPU backend's pinned memory) and cfg.Pinned is set. With
// cfg.HOnDevice a backend that fuses the quotient with the L‖H MSM (the
// GPU's) does so.
func BenchBackend(ctx context.Context, name string, be groth16.Backend, cfg ProveConfig, c *porep.Circuit, sys *r1cs.System,
	pk *groth16.ProvingKey, vk *groth16.VerifyingKey) (_ *BackendResult, err error) {
	res := &BackendResult{Name: name}
	ws := &groth16.Workspace{}
	var alloc groth16.HostAllocator
	if a, ok := be.(groth16.HostAllocator); ok && cfg.Pinned {
		ws, alloc = groth16.NewWorkspace(a), a
	}
	defer func() { err = errors.Join(err, ws.Close()) }()
	syn, err := NewSynthesizer(c, sys, alloc)
	if err != nil {
		return nil, err
	}
	w := worker{sb: NewSerial(be), fuse: cfg.HOnDevice, ws: ws, syn: syn, pk: pk, vk: vk}
	for i := 0; i <= cfg.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := w.proveOnce(ctx, res, i, devkeys.Rand(cfg.Seed, uint64(i)+1)); err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
	}
	// The serial wrapper times each backend call alone; these runs repeat
	// the timed ones on the bare backend, where groth16.Prove's G1 MSMs
	// overlap (and their host work with the device's), and must give the
	// same proofs.
	bare := be
	if !cfg.HOnDevice {
		bare = WithoutFused(be)
	}
	for i := 1; i <= cfg.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := w.proveOverlapped(ctx, res, i, bare, devkeys.Rand(cfg.Seed, uint64(i)+1)); err != nil {
			return nil, fmt.Errorf("overlapped run %d: %w", i, err)
		}
	}
	return res, nil
}

// worker is the loop of BenchBackend: a daemon worker's state, one proof
// after another.
type worker struct {
	sb     *Serial
	fuse   bool
	ws     *groth16.Workspace
	syn    *Synthesizer
	pk     *groth16.ProvingKey
	vk     *groth16.VerifyingKey
	phases Recorder
}

// proveOnce synthesizes, proves (calls serialized and timed) and verifies
// one proof and records it in res (times only when run > 0).
func (w *worker) proveOnce(ctx context.Context, res *BackendResult, run int, rnd io.Reader) error {
	start := time.Now()
	asg, err := w.syn.Solve()
	if err != nil {
		return err
	}
	synth := time.Since(start)
	if run == 0 {
		res.Witness = benchinput.CountWires(asg.Public, asg.Private)
	}
	public := asg.PublicInputs()
	start = time.Now()
	proof, err := groth16.Prove(w.phases.Context(ctx), w.pk, asg, w.sb.Backend(w.fuse), rnd, groth16.WithWorkspace(w.ws))
	if err != nil {
		return err
	}
	prove := time.Since(start)
	pt := w.phases.Take(w.sb.TakeCalls())
	start = time.Now()
	if err := groth16.Verify(w.vk, proof, public); err != nil {
		res.Failed = append(res.Failed, fmt.Sprintf("run %d: %v", run, err))
	}
	verify := time.Since(start)
	raw, err := encodeProof(proof)
	if err != nil {
		return err
	}
	res.Proofs = append(res.Proofs, raw)
	res.Points = pt.Points
	if run == 0 {
		return nil
	}
	res.Synth, res.Prove, res.Verify = append(res.Synth, synth), append(res.Prove, prove), append(res.Verify, verify)
	res.Phases.Add(pt)
	return nil
}

// proveOverlapped times groth16.Prove on be for run i and checks that the
// proof equals the timed run's.
func (w *worker) proveOverlapped(ctx context.Context, res *BackendResult, i int, be groth16.Backend, rnd io.Reader) error {
	asg, err := w.syn.Solve()
	if err != nil {
		return err
	}
	start := time.Now()
	proof, err := groth16.Prove(ctx, w.pk, asg, be, rnd, groth16.WithWorkspace(w.ws))
	if err != nil {
		return err
	}
	res.Overlapped = append(res.Overlapped, time.Since(start))
	raw, err := encodeProof(proof)
	if err != nil {
		return err
	}
	if bytes.Equal(raw, res.Proofs[i]) {
		res.SameOverlapped++
	}
	return nil
}

func encodeProof(p *groth16.Proof) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode proof: %w", err)
	}
	return buf.Bytes(), nil
}
