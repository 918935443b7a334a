package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
	phL                     // MSM G1 over L‖H (two MSMs for a key with L and H apart)
	phQLH                   // the L‖H MSM of the fused call (groth16.QuotientLHBackend), h from the quotient on the GPU
	numPhases
)

// phaseShort names the phases in errors.
var phaseShort = [numPhases]string{phQuotient: "quotient", phA: "A", phB1: "B G1", phB2: "B G2", phL: "L‖H", phQLH: "quotient and L‖H"}

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
		return fmt.Sprintf("MSM L‖H   G1 %d", points)
	default:
		return fmt.Sprintf("MSM L‖H   G1 %d, h on GPU", points)
	}
}

// phaseTimes are the times of one proof's phases: wall is each backend
// call's wall time as groth16.Prove saw it; upload, compute and stage come
// from the GPU MSM engine's own records (host wall time of the scalar
// upload through pinned memory; CUDA-event times of the device pipeline and
// of its stages); points is each call's size (0: the phase did not run)
// and bits its window bits.
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

// callPhase maps groth16's phases of backend calls to the benchmark's.
var callPhase = map[groth16.Phase]phase{
	groth16.PhaseQuotient: phQuotient, groth16.PhaseMSMA: phA, groth16.PhaseMSMB1: phB1, groth16.PhaseMSMB2: phB2,
	groth16.PhaseMSMLH: phL, groth16.PhaseQuotientLH: phQLH,
}

// phaseRecorder collects the phases of the proofs made with its context:
// groth16's (each backend call, as Prove times it) and the GPU's records
// of each MSM and quotient. It is safe for concurrent use.
type phaseRecorder struct {
	pt    groth16.PhaseTimes
	mu    sync.Mutex
	msms  []gpu.MSMTimings
	quots []gpu.QuotientTimings
}

// context returns ctx with r's traces installed.
func (r *phaseRecorder) context(ctx context.Context) context.Context {
	ctx = groth16.WithTrace(ctx, r.pt.Trace())
	return gpu.WithTrace(ctx, &gpu.Trace{
		MSMDone: func(m gpu.MSMTimings) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.msms = append(r.msms, m)
		},
		QuotientDone: func(q gpu.QuotientTimings) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.quots = append(r.quots, q)
		},
	})
}

// take returns the times recorded since the last take and forgets them.
func (r *phaseRecorder) take() phaseTimes {
	infos := r.pt.Infos()
	r.pt.Reset()
	r.mu.Lock()
	msms, quots := r.msms, r.quots
	r.msms, r.quots = nil, nil
	r.mu.Unlock()
	return phaseTimesOf(infos, msms, quots)
}

// lastMSM returns the GPU's record of the latest MSM made with r's context.
func (r *phaseRecorder) lastMSM() (gpu.MSMTimings, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msms) == 0 {
		return gpu.MSMTimings{}, errors.New("msm timings: no MSM reported")
	}
	return r.msms[len(r.msms)-1], nil
}

// phaseTimesOf sums one proof's records per phase. The fused call's
// quotient (a GPU record) is split off its wall into phQuotient; the B
// pair call's wall is split by the GPU's records: phB2 gets the G2 MSM's
// wait for its scalars and its device time, phB1 the rest of the call.
func phaseTimesOf(infos []groth16.PhaseInfo, msms []gpu.MSMTimings, quots []gpu.QuotientTimings) phaseTimes {
	var t phaseTimes
	var pair time.Duration
	for _, i := range infos {
		if i.Device != "" {
			continue // the GPU's own sub-phases: its records below carry them with their shape
		}
		if i.Phase == groth16.PhaseMSMBPair {
			pair += i.Duration
			t.points[phB1], t.points[phB2] = i.Points, i.Points
		}
		if ph, ok := callPhase[i.Phase]; ok {
			t.wall[ph] += i.Duration
			t.points[ph] = i.Points
		}
	}
	for _, q := range quots {
		if q.Call == groth16.PhaseQuotientLH {
			t.wall[phQuotient] += q.Compute
			t.wall[phQLH] -= q.Compute
			t.points[phQuotient] = q.Points
		}
	}
	t.wall[phB1] += pair
	for _, m := range msms {
		ph, ok := callPhase[m.Call]
		if !ok {
			continue
		}
		if m.Call == groth16.PhaseMSMB2 && pair > 0 {
			t.wall[phB1] -= m.Upload + m.Compute
			t.wall[phB2] += m.Upload + m.Compute
		}
		t.upload[ph] += m.Upload
		t.compute[ph] += m.Compute
		for i, d := range [numStages]time.Duration{m.Sort, m.Accumulate, m.Reduce, m.Window} {
			t.stage[ph][i] += d
		}
		t.bits[ph] = m.Bits
	}
	return t
}

// serialBackend wraps a groth16.Backend and serializes the calls that Prove
// makes concurrently, so that every phase is timed alone (a GPU serves them
// one at a time anyway).
type serialBackend struct {
	inner groth16.Backend
	mu    sync.Mutex
}

// backend returns s as Prove should see it: with the B pair call when the
// inner backend has one, and also with the fused quotient and L‖H call and
// Prefetch when fuse is set and it has those too (the GPU backend has all;
// a backend with the fused call alone is run on the plain path).
func (s *serialBackend) backend(fuse bool) groth16.Backend {
	_, fused := s.inner.(groth16.QuotientLHBackend)
	_, pair := s.inner.(groth16.BPairBackend)
	switch {
	case pair && fused && fuse:
		return serialGPU{serialPair{s}}
	case pair:
		return serialPair{s}
	}
	return s
}

// serialPair is a serialBackend whose inner backend has the B pair call;
// serialGPU one that also fuses the quotient with the L‖H MSM and passes on
// Prefetch.
type (
	serialPair struct{ *serialBackend }
	serialGPU  struct{ serialPair }
)

// Prove finds the optional calls by type assertion: keep the wrappers' sets.
var (
	_ groth16.BPairBackend      = serialPair{}
	_ groth16.BPairBackend      = serialGPU{}
	_ groth16.QuotientLHBackend = serialGPU{}
	_ groth16.Prefetcher        = serialGPU{}
)

func (s *serialBackend) QuotientH(ctx context.Context, a, b, c []fr.Element) ([]fr.Element, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.QuotientH(ctx, a, b, c)
}

func (s *serialBackend) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.MSMG1(ctx, bases, scalars)
}

func (s *serialBackend) MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.MSMG2(ctx, bases, scalars)
}

func (s serialPair) MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, sc []fr.Element) (
	bls12381.G1Jac, bls12381.G2Jac, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.(groth16.BPairBackend).MSMB(ctx, g1, g2, sc)
}

func (s serialGPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, b, c []fr.Element) (bls12381.G1Jac, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inner.(groth16.QuotientLHBackend).MSMQuotientLH(ctx, lh, private, a, b, c)
}

// Prefetch passes the announcement on to the inner backend where it takes
// one (groth16.Prefetcher; the GPU backend does).
func (s serialGPU) Prefetch(ctx context.Context, sc ...[]fr.Element) error {
	if pf, ok := s.inner.(groth16.Prefetcher); ok {
		return pf.Prefetch(ctx, sc...)
	}
	return nil
}

// gpuProver is the GPU backend as the benchmark runs it: gpu.Backend,
// whose pinned host memory serves the workspace (groth16.HostAllocator) and
// whose calls report each MSM's transfer and device times (gpu.Trace).
type gpuProver struct{ *gpu.Backend }

func newGPUProver(dev *driver.Device) (*gpuProver, error) {
	b, err := gpu.New(dev)
	if err != nil {
		return nil, err
	}
	return &gpuProver{b}, nil
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
