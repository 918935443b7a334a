package gpubench

import (
	"context"
	"sync"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Serial wraps a groth16.Backend and serializes the calls that Prove makes
// concurrently, so that every phase is timed alone (a GPU serves them one
// at a time anyway): it times each call once it holds the backend, which
// Prove's own phases, taken from before the wait, cannot do. It keeps each
// call's time and result by the call's groth16 phase (groth16.ContextCall),
// so that a benchmark can check the MSMs of a proof it cannot verify. It is
// safe for concurrent use.
type Serial struct {
	inner groth16.Backend
	mu    sync.Mutex
	calls []groth16.PhaseInfo
	sums  Sums
}

// Sums are the results of one proof's calls: the MSMs by groth16 phase (a
// B pair call's under PhaseMSMB1 and PhaseMSMB2) and the quotient's h as
// QuotientH returned it (valid until the backend's next quotient).
type Sums struct {
	G1 map[groth16.Phase]bls12381.G1Jac
	G2 map[groth16.Phase]bls12381.G2Jac
	H  []fr.Element
}

// NewSerial returns inner wrapped.
func NewSerial(inner groth16.Backend) *Serial { return &Serial{inner: inner} }

// Backend returns s as Prove should see it: with the B pair call when the
// inner backend has one, and also with the fused quotient and L‖H call and
// Prefetch when fuse is set and it has those too (the GPU backend has all;
// a backend with the fused call alone is run on the plain path).
func (s *Serial) Backend(fuse bool) groth16.Backend {
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

// TakeCalls returns the calls timed since the last TakeCalls, in order:
// each a host phase named by its groth16 phase, its wall time from when it
// held the backend, and its size (the domain for a quotient, the points for
// an MSM).
func (s *Serial) TakeCalls() []groth16.PhaseInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

// lock takes the backend for one call of size points and returns the
// function that times it and gives the backend back.
func (s *Serial) lock(ctx context.Context, points int) (unlock func()) {
	s.mu.Lock()
	start := time.Now()
	return func() {
		s.calls = append(s.calls, groth16.PhaseInfo{Phase: groth16.ContextCall(ctx), Start: start,
			Duration: time.Since(start), Points: points})
		s.mu.Unlock()
	}
}

// TakeSums returns the results kept since the last TakeSums.
func (s *Serial) TakeSums() Sums {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sums
	s.sums = Sums{}
	return out
}

// keepG1 and keepG2 record a result; called with mu held.
func (s *Serial) keepG1(ctx context.Context, p bls12381.G1Jac) {
	if s.sums.G1 == nil {
		s.sums.G1 = map[groth16.Phase]bls12381.G1Jac{}
	}
	s.sums.G1[groth16.ContextCall(ctx)] = p
}

func (s *Serial) keepG2(ctx context.Context, p bls12381.G2Jac) {
	if s.sums.G2 == nil {
		s.sums.G2 = map[groth16.Phase]bls12381.G2Jac{}
	}
	s.sums.G2[groth16.ContextCall(ctx)] = p
}

// serialPair is a Serial whose inner backend has the B pair call;
// serialGPU one that also fuses the quotient with the L‖H MSM and passes on
// Prefetch.
type (
	serialPair struct{ *Serial }
	serialGPU  struct{ serialPair }
)

// Prove finds the optional calls by type assertion: keep the wrappers' sets.
var (
	_ groth16.BPairBackend      = serialPair{}
	_ groth16.BPairBackend      = serialGPU{}
	_ groth16.QuotientLHBackend = serialGPU{}
	_ groth16.Prefetcher        = serialGPU{}
)

// QuotientH implements groth16.Backend, one call at a time.
func (s *Serial) QuotientH(ctx context.Context, a, b, c []fr.Element) ([]fr.Element, error) {
	defer s.lock(ctx, len(a))()
	h, err := s.inner.QuotientH(ctx, a, b, c)
	s.sums.H = h
	return h, err
}

// MSMG1 implements groth16.Backend, one call at a time.
func (s *Serial) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	defer s.lock(ctx, len(bases))()
	p, err := s.inner.MSMG1(ctx, bases, scalars)
	s.keepG1(ctx, p)
	return p, err
}

// MSMG2 implements groth16.Backend, one call at a time.
func (s *Serial) MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	defer s.lock(ctx, len(bases))()
	p, err := s.inner.MSMG2(ctx, bases, scalars)
	s.keepG2(ctx, p)
	return p, err
}

func (s serialPair) MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, sc []fr.Element) (
	bls12381.G1Jac, bls12381.G2Jac, error) {
	defer s.lock(ctx, len(sc))()
	p1, p2, err := s.inner.(groth16.BPairBackend).MSMB(ctx, g1, g2, sc)
	s.keepG1(groth16.WithCall(ctx, groth16.PhaseMSMB1), p1)
	s.keepG2(groth16.WithCall(ctx, groth16.PhaseMSMB2), p2)
	return p1, p2, err
}

func (s serialGPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, b, c []fr.Element) (bls12381.G1Jac, error) {
	defer s.lock(ctx, len(lh))()
	p, err := s.inner.(groth16.QuotientLHBackend).MSMQuotientLH(ctx, lh, private, a, b, c)
	s.keepG1(ctx, p)
	return p, err
}

// Prefetch passes the announcement on to the inner backend where it takes
// one (groth16.Prefetcher; the GPU backend does).
func (s serialGPU) Prefetch(ctx context.Context, sc ...[]fr.Element) error {
	if pf, ok := s.inner.(groth16.Prefetcher); ok {
		return pf.Prefetch(ctx, sc...)
	}
	return nil
}

// plainBackend hides every method of a backend beyond groth16.Backend;
// pairOnly keeps the B pair call. WithoutFused uses them.
type (
	plainBackend struct{ groth16.Backend }
	pairOnly     struct{ groth16.BPairBackend }
)

// WithoutFused returns be without its fused quotient and L‖H call (and
// Prefetch), so that Prove takes the path through the host; the B pair call
// stays.
func WithoutFused(be groth16.Backend) groth16.Backend {
	if bp, ok := be.(groth16.BPairBackend); ok {
		return pairOnly{bp}
	}
	return plainBackend{be}
}
