package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// phase is one backend call of groth16.Prove.
type phase int

const (
	phQuotient phase = iota // QuotientH: 3 iNTT + 3 coset NTT + 1 coset iNTT
	phA                     // MSM G1 over the A wires
	phB1                    // MSM G1 over the B wires
	phB2                    // MSM G2 over the B wires
	phL                     // MSM G1 over the private wires, or over L‖H when one MSM
	phH                     // MSM G1 over the quotient coefficients, when apart from L
	phQLH                   // the L‖H MSM of the fused call (groth16.QuotientLHBackend), h from the quotient on the GPU
	numPhases
)

// phaseShort names the phases in errors.
var phaseShort = [numPhases]string{phQuotient: "quotient", phA: "A", phB1: "B G1", phB2: "B G2", phL: "L", phH: "H", phQLH: "quotient and L‖H"}

// phaseLabel is a phase's table label; points is the MSM's size (the
// domain size for the quotient).
func phaseLabel(ph phase, points int, pk *groth16.ProvingKey) string {
	switch ph {
	case phQuotient:
		return fmt.Sprintf("quotient H (7 NTTs, %s)", sizeString(points))
	case phA:
		return fmt.Sprintf("MSM A     G1 %d", points)
	case phB1:
		return fmt.Sprintf("MSM B     G1 %d", points)
	case phB2:
		return fmt.Sprintf("MSM B     G2 %d", points)
	case phL:
		if points > len(pk.G1.L) {
			return fmt.Sprintf("MSM L‖H   G1 %d", points)
		}
		return fmt.Sprintf("MSM L (C) G1 %d", points)
	case phQLH:
		return fmt.Sprintf("MSM L‖H   G1 %d, h on GPU", points)
	default:
		return fmt.Sprintf("MSM H     G1 %d", points)
	}
}

// phaseTimes are the times of one proof's phases. upload, compute and
// stage come from the GPU MSM engine's own records (host wall time of the
// scalar upload through pinned memory; CUDA-event times of the device
// pipeline and of its stages); points is each call's size (0: the phase
// did not run) and bits its window bits.
type phaseTimes struct {
	wall, upload, compute [numPhases]time.Duration
	stage                 [numPhases][numStages]time.Duration
	points, bits          [numPhases]int
}

// MSM pipeline stages, in order; they add up to the device compute time.
const (
	stSort = iota
	stAccumulate
	stReduce
	stWindow
	numStages
)

var stageName = [numStages]string{stSort: "sort", stAccumulate: "accumulate", stReduce: "reduce", stWindow: "window"}

// msmTimer is what a backend offers when it can report its last MSM's
// transfer and device times.
type msmTimer interface {
	LastTimings() (gpu.MSMTimings, error)
}

// timedBackend wraps a groth16.Backend and times each call. It serializes
// the calls that Prove makes concurrently, so that every phase is timed
// alone (a GPU serves them one at a time anyway); the MSM is told apart by
// its bases slice (an MSM over L‖H starts where L does).
type timedBackend struct {
	inner  groth16.Backend
	pk     *groth16.ProvingKey
	mu     sync.Mutex
	times  phaseTimes
	gpuErr error // first failure to read the GPU's MSM records
}

func newTimedBackend(inner groth16.Backend, pk *groth16.ProvingKey) *timedBackend {
	return &timedBackend{inner: inner, pk: pk}
}

// backend returns t as Prove should see it: with the B pair call when the
// inner backend has one, and also with the fused quotient and L‖H call and
// Prefetch when fuse is set and it has those too (the GPU backend has all;
// a backend with the fused call alone is timed on the plain path).
func (t *timedBackend) backend(fuse bool) groth16.Backend {
	_, fused := t.inner.(groth16.QuotientLHBackend)
	_, pair := t.inner.(groth16.BPairBackend)
	switch {
	case pair && fused && fuse:
		return timedGPU{timedPair{t}}
	case pair:
		return timedPair{t}
	}
	return t
}

// timedPair is a timedBackend whose inner backend has the B pair call;
// timedGPU one that also fuses the quotient with the L‖H MSM and passes on
// Prefetch.
type (
	timedPair struct{ *timedBackend }
	timedGPU  struct{ timedPair }
)

// Prove finds the optional calls by type assertion: keep the wrappers' sets.
var (
	_ groth16.BPairBackend      = timedPair{}
	_ groth16.BPairBackend      = timedGPU{}
	_ groth16.QuotientLHBackend = timedGPU{}
	_ groth16.Prefetcher        = timedGPU{}
)

func (t timedPair) MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, s []fr.Element) (bls12381.G1Jac, bls12381.G2Jac, error) {
	return t.msmB(ctx, g1, g2, s)
}

func (t timedGPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, b, c []fr.Element) (bls12381.G1Jac, error) {
	return t.quotientLH(ctx, lh, private, a, b, c)
}

// Prefetch passes the announcement on to the inner backend where it takes
// one (groth16.Prefetcher; the GPU backend does). It is not a timed phase.
func (t timedGPU) Prefetch(ctx context.Context, s ...[]fr.Element) error {
	if pf, ok := t.inner.(groth16.Prefetcher); ok {
		return pf.Prefetch(ctx, s...)
	}
	return nil
}

// quotientTimer is what a backend offers when it can report its last
// quotient's times.
type quotientTimer interface {
	LastQuotientTimings() (gpu.QuotientTimings, error)
}

// quotientLH times the fused call, split into its quotient (phQuotient,
// from the backend's own record) and the rest (phQLH).
func (t *timedBackend) quotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, b, c []fr.Element) (bls12381.G1Jac, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	start := time.Now()
	p, err := t.inner.(groth16.QuotientLHBackend).MSMQuotientLH(ctx, lh, private, a, b, c)
	t.record(phQLH, len(lh), start)
	if qt, ok := t.inner.(quotientTimer); ok && err == nil {
		q, qerr := qt.LastQuotientTimings()
		if qerr != nil {
			t.gpuErr = errors.Join(t.gpuErr, qerr)
		}
		t.times.wall[phQuotient] += q.Compute
		t.times.wall[phQLH] -= q.Compute
		t.times.points[phQuotient] = len(a)
	}
	return p, err
}

// pairTimer is what a backend offers when it can report the times of the
// two MSMs of its last B pair call.
type pairTimer interface {
	LastMSMBTimings() ([2]gpu.MSMTimings, error)
}

// msmB times the B pair call, split into its G1 MSM (phB1) and its G2 MSM
// (phB2) by the backend's own records: phB2's wall is the G2 MSM's wait for
// its scalars and its device time, phB1 the rest of the call.
func (t *timedBackend) msmB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, s []fr.Element) (bls12381.G1Jac, bls12381.G2Jac, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	start := time.Now()
	p1, p2, err := t.inner.(groth16.BPairBackend).MSMB(ctx, g1, g2, s)
	wall := time.Since(start)
	t.times.points[phB1], t.times.points[phB2] = len(g1), len(g2)
	pt, ok := t.inner.(pairTimer)
	if !ok || err != nil {
		t.times.wall[phB1] += wall
		return p1, p2, err
	}
	recs, rerr := pt.LastMSMBTimings()
	if rerr != nil {
		t.gpuErr = errors.Join(t.gpuErr, rerr)
	}
	g2Wall := recs[1].Upload + recs[1].Compute
	t.times.wall[phB1] += wall - g2Wall
	t.times.wall[phB2] += g2Wall
	t.addRecord(phB1, recs[0])
	t.addRecord(phB2, recs[1])
	return p1, p2, err
}

// take returns the times since the last take and resets them.
func (t *timedBackend) take() (phaseTimes, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pt, err := t.times, t.gpuErr
	t.times, t.gpuErr = phaseTimes{}, nil
	return pt, err
}

func (t *timedBackend) QuotientH(ctx context.Context, a, b, c []fr.Element) ([]fr.Element, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	start := time.Now()
	h, err := t.inner.QuotientH(ctx, a, b, c)
	t.times.wall[phQuotient] += time.Since(start)
	t.times.points[phQuotient] = len(a)
	return h, err
}

func (t *timedBackend) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	start := time.Now()
	p, err := t.inner.MSMG1(ctx, bases, scalars)
	t.record(t.g1Phase(bases), len(bases), start)
	return p, err
}

func (t *timedBackend) MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	start := time.Now()
	p, err := t.inner.MSMG2(ctx, bases, scalars)
	t.record(phB2, len(bases), start)
	return p, err
}

// record adds the wall time since start, and the GPU's own records when the
// backend keeps them, to phase ph. Called with mu held.
func (t *timedBackend) record(ph phase, points int, start time.Time) {
	t.times.wall[ph] += time.Since(start)
	t.times.points[ph] = points
	mt, ok := t.inner.(msmTimer)
	if !ok {
		return
	}
	rec, err := mt.LastTimings()
	if err != nil {
		t.gpuErr = errors.Join(t.gpuErr, err)
		return
	}
	t.addRecord(ph, rec)
}

// addRecord adds an MSM's own record to phase ph. Called with mu held.
func (t *timedBackend) addRecord(ph phase, rec gpu.MSMTimings) {
	t.times.upload[ph] += rec.Upload
	t.times.compute[ph] += rec.Compute
	for i, d := range [numStages]time.Duration{rec.Sort, rec.Accumulate, rec.Reduce, rec.Window} {
		t.times.stage[ph][i] += d
	}
	t.times.bits[ph] = rec.Bits
}

// g1Phase names the G1 MSM over bases by comparing it with the key's slices.
func (t *timedBackend) g1Phase(bases []bls12381.G1Affine) phase {
	same := func(s []bls12381.G1Affine) bool {
		return len(s) > 0 && len(bases) > 0 && unsafe.SliceData(s) == unsafe.SliceData(bases)
	}
	switch {
	case same(t.pk.G1.A):
		return phA
	case same(t.pk.G1.B):
		return phB1
	case same(t.pk.G1.L):
		return phL
	default:
		return phH
	}
}

// gpuProver is the GPU backend as the benchmark runs it: gpu.Backend,
// whose pinned host memory serves the workspace (groth16.HostAllocator) and
// whose MSM engine reports each MSM's transfer and device times.
type gpuProver struct{ *gpu.Backend }

func newGPUProver(dev *driver.Device) (*gpuProver, error) {
	b, err := gpu.New(dev)
	if err != nil {
		return nil, err
	}
	return &gpuProver{b}, nil
}

func (g *gpuProver) LastTimings() (gpu.MSMTimings, error) {
	rec, err := g.LastMSMTimings()
	if err != nil {
		return rec, fmt.Errorf("msm timings: %w", err)
	}
	return rec, nil
}

// plainBackend hides every method of a backend beyond groth16.Backend;
// pairOnly keeps the B pair call. withoutFused uses them to hide a backend's
// fused quotient and L‖H call, so that Prove takes the path through the
// host.
type (
	plainBackend struct{ groth16.Backend }
	pairOnly     struct{ groth16.BPairBackend }
)

func withoutFused(be groth16.Backend) groth16.Backend {
	if bp, ok := be.(groth16.BPairBackend); ok {
		return pairOnly{bp}
	}
	return plainBackend{be}
}
