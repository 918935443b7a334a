package gpubench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
)

// PartitionResult is what the partition runs measured. The warm-up run
// (which uploads the bases) is timed apart and its results are checked.
type PartitionResult struct {
	Warmup       time.Duration
	Runs         Samples // each timed groth16.Prove
	Phases       PhaseSamples
	Points, Bits [NumPhases]int
	Checks       [NumPhases]string // per phase: "ok: …", "MISMATCH", "" (not checked)
}

// RunPartition proves p with groth16.Prove on be, the backend's calls one
// after another (Serial), each timed: one warm-up, then cfg.Runs timed
// proofs. With cfg.HOnDevice and a backend that fuses the quotient with the
// L‖H MSM (the GPU's), the proofs take the fused call; the warm-up then
// runs both ways, and the fused run must equal the host path's. With
// cfg.Check the warm-up's results are checked: every MSM against
// gnark-crypto's MultiExp on the scalars folded to the tile (exact), the
// quotient by h(ζ)·Z(ζ) = a(ζ)·b(ζ) − c(ζ) at a random ζ (QuotientProbe).
// Prove's workspace is in be's pinned host memory when cfg.Pin says so.
func RunPartition(ctx context.Context, cfg PartitionConfig, p *Partition, be groth16.Backend) (_ *PartitionResult, err error) {
	var probe benchinput.QuotientProbe
	if cfg.Check {
		if probe, err = benchinput.NewQuotientProbe(p.A, p.B, p.C, benchinput.RandomScalars(1, cfg.Seed+6)[0]); err != nil {
			return nil, err
		}
	}
	ws := &groth16.Workspace{}
	if cfg.Pin >= PinScalars {
		a, ok := be.(groth16.HostAllocator)
		if !ok {
			return nil, errors.New("partition: pinned workspace: the backend allocates no host memory")
		}
		ws = groth16.NewWorkspace(a)
	}
	defer func() { err = errors.Join(err, ws.Close()) }()
	r := partitionRun{cfg: cfg, p: p, sb: NewSerial(be), ws: ws, probe: probe}
	return r.run(ctx)
}

// partitionRun is one RunPartition.
type partitionRun struct {
	cfg    PartitionConfig
	p      *Partition
	sb     *Serial
	ws     *groth16.Workspace
	probe  benchinput.QuotientProbe
	phases Recorder
}

func (r *partitionRun) run(ctx context.Context) (*PartitionResult, error) {
	res := &PartitionResult{}
	start := time.Now()
	if err := r.warmup(ctx, &res.Checks); err != nil {
		return res, err
	}
	res.Warmup = time.Since(start)
	r.phases.Take(r.sb.TakeCalls())
	for run := 1; run <= r.cfg.Runs; run++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		start := time.Now()
		if _, err := r.prove(r.phases.Context(ctx), r.cfg.HOnDevice, uint64(run)); err != nil {
			return res, fmt.Errorf("run %d: %w", run, err)
		}
		res.Runs = append(res.Runs, time.Since(start))
		pt := r.phases.Take(r.sb.TakeCalls())
		res.Phases.Add(pt)
		res.Points, res.Bits = pt.Points, pt.Bits
	}
	return res, nil
}

// prove runs groth16.Prove on the partition, with the fused call when
// fuse is set and the backend has it.
func (r *partitionRun) prove(ctx context.Context, fuse bool, run uint64) ([]byte, error) {
	proof, err := groth16.Prove(ctx, r.p.PK, r.p.Assignment(), r.sb.Backend(fuse), devkeys.Rand(r.cfg.Seed, run+1),
		groth16.WithWorkspace(r.ws))
	if err != nil {
		return nil, err
	}
	return encodeProof(proof)
}

// warmup proves once with the fused call when there is one (it leaves a,
// b, c as they are, so it runs first, on the inputs the host path then
// checks), then once through the host, and checks the results.
func (r *partitionRun) warmup(ctx context.Context, checks *[NumPhases]string) error {
	_, fused := r.sb.Backend(r.cfg.HOnDevice).(groth16.QuotientLHBackend)
	var fusedSums *Sums
	var fusedProof []byte
	if fused {
		var err error
		if fusedProof, err = r.prove(ctx, true, 0); err != nil {
			return fmt.Errorf("warm-up, h on the GPU: %w", err)
		}
		s := r.sb.TakeSums()
		fusedSums = &s
	}
	hostProof, err := r.prove(ctx, false, 0)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	host := r.sb.TakeSums()
	if !r.cfg.Check {
		return nil
	}
	return errors.Join(r.check(host, checks), checkFused(host, fusedSums, bytes.Equal(fusedProof, hostProof), checks))
}
