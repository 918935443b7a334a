package groth16_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// readyPrefetchCPU is prefetchCPU as a ReadyPrefetcher. Its fused call
// waits until the announced vectors are ready, which happens only if Prove
// compacts them beside the call; its MSMs check they never read a vector
// announced but not yet ready.
type readyPrefetchCPU struct {
	prefetchCPU
	mu    sync.Mutex
	ready <-chan struct{}
	early error
}

func (b *readyPrefetchCPU) PrefetchReady(ctx context.Context, ready <-chan struct{}, scalars ...[]fr.Element) error {
	b.mu.Lock()
	b.ready = ready
	b.mu.Unlock()
	b.log("prefetch ready")
	b.announced = scalars
	return nil
}

func (b *readyPrefetchCPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	b.mu.Lock()
	ready := b.ready
	b.mu.Unlock()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		return bls12381.G1Jac{}, errors.New("the compactions never completed beside the fused call")
	}
	return b.prefetchCPU.MSMQuotientLH(ctx, lh, private, a, bv, c)
}

func (b *readyPrefetchCPU) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	b.mu.Lock()
	select {
	case <-b.ready:
	default:
		b.early = errors.New("an MSM read an announced vector before it was ready")
	}
	b.mu.Unlock()
	return b.prefetchCPU.MSMG1(ctx, bases, scalars)
}

// A ReadyPrefetcher gets the A and B wires announced before the fused call
// and compacted beside it (its fused call waits for them: sequential
// compactions would never finish), the MSMs read them only once ready, the
// proof is the plain backend's, and the compactions are their own phase.
func TestProveCompactsBesideTheFusedCall(t *testing.T) {
	f, want, asg, inner := proveSetup(t, 14, 15)
	be := &readyPrefetchCPU{prefetchCPU: prefetchCPU{fusedCPU: fusedCPU{Backend: inner}}}
	var pt groth16.PhaseTimes
	got, err := groth16.Prove(groth16.WithTrace(context.Background(), pt.Trace()), f.pk, asg, be, seeded(15))
	require.NoError(t, err)
	require.NoError(t, be.early)
	require.NoError(t, groth16.Verify(f.vk, got, asg.PublicInputs()))
	assert.Equal(t, encode(t, want), encode(t, got))
	require.GreaterOrEqual(t, len(be.calls), 2, "%v", be.calls)
	assert.Equal(t, []string{"prefetch ready", "quotient+L‖H"}, be.calls[:2])
	assert.ElementsMatch(t, []string{"msm announced 0", "msm announced 1"}, be.calls[2:], "A and B₁ over the announced wires")
	d := pt.Durations()
	assert.Contains(t, d, groth16.PhaseCompact)
	assert.Contains(t, d, groth16.PhaseHost)
}
