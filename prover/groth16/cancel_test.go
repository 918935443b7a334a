package groth16_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// countingCPU is the CPU backend counting every call.
type countingCPU struct {
	*cpu.Backend
	calls atomic.Int32
}

func (b *countingCPU) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	b.calls.Add(1)
	return b.Backend.QuotientH(ctx, a, bv, c)
}

func (b *countingCPU) MSMG1(ctx context.Context, bases []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	b.calls.Add(1)
	return b.Backend.MSMG1(ctx, bases, s)
}

func (b *countingCPU) MSMG2(ctx context.Context, bases []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	b.calls.Add(1)
	return b.Backend.MSMG2(ctx, bases, s)
}

// A Prove whose context is already cancelled returns at once, before any
// backend call or host work.
func TestProveCancelledBeforeStart(t *testing.T) {
	c := &r1cstest.MulChain{N: 200, Seed: fr.NewElement(3)}
	f := setup(t, c)
	asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	inner, err := cpu.New()
	require.NoError(t, err)
	be := &countingCPU{Backend: inner}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err = groth16.Prove(ctx, f.pk, asg, be, seeded(1))
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "before start")
	assert.Zero(t, be.calls.Load(), "backend calls")

	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	_, err = groth16.Prove(dctx, f.pk, asg, be, seeded(1))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, be.calls.Load(), "backend calls")
}

// A Prove cancelled from its trace when a phase ends returns
// context.Canceled from the next stage check, and the next Prove on the
// same backend and workspace gives the uncancelled proof.
func TestProveCancelledFromTrace(t *testing.T) {
	c := &r1cstest.MulChain{N: 90, Seed: fr.NewElement(8)}
	f := setup(t, c)
	want, _ := prove(t, f, c, seeded(4))
	inner, err := cpu.New()
	require.NoError(t, err)
	be := &countingCPU{Backend: inner}
	ws := &groth16.Workspace{}
	for _, tc := range []struct {
		at        groth16.Phase
		calls     int32 // backend calls made before the stop
		stoppedAt string
	}{
		{groth16.PhaseQuotient, 1, "before G1 MSMs"},
		{groth16.PhaseMSMB2, 5, "before assembly"},
	} {
		t.Run(string(tc.at), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx = groth16.WithTrace(ctx, &groth16.Trace{PhaseDone: func(i groth16.PhaseInfo) {
				if i.Phase == tc.at {
					cancel()
				}
			}})
			be.calls.Store(0)
			asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
			require.NoError(t, err)
			_, err = groth16.Prove(ctx, f.pk, asg, be, seeded(4), groth16.WithWorkspace(ws))
			require.ErrorIs(t, err, context.Canceled)
			assert.ErrorContains(t, err, tc.stoppedAt)
			assert.Equal(t, tc.calls, be.calls.Load(), "backend calls")

			asg, err = r1cs.Solve(c, r1cs.WithShape(f.sys))
			require.NoError(t, err)
			got, err := groth16.Prove(context.Background(), f.pk, asg, be, seeded(4), groth16.WithWorkspace(ws))
			require.NoError(t, err)
			require.NoError(t, groth16.Verify(f.vk, got, asg.PublicInputs()))
			assert.Equal(t, encode(t, want), encode(t, got))
		})
	}
}

// A Prefetcher whose Prove stops after the fused call gets its announcement
// withdrawn (a Prefetch of nothing), although the context is cancelled.
func TestProveCancelledDropsPrefetch(t *testing.T) {
	f, _, asg, inner := proveSetup(t, 12, 13)
	ctx, cancel := context.WithCancel(context.Background())
	be := &cancellingPrefetch{prefetchCPU: prefetchCPU{fusedCPU: fusedCPU{Backend: inner}}, cancel: cancel}
	_, err := groth16.Prove(ctx, f.pk, asg, be, seeded(13))
	require.ErrorIs(t, err, context.Canceled)
	require.GreaterOrEqual(t, len(be.calls), 3, "%v", be.calls)
	assert.Equal(t, []string{"prefetch", "quotient+L‖H"}, be.calls[:2])
	assert.Equal(t, "prefetch", be.calls[len(be.calls)-1], "the announcement is dropped last")
	assert.Empty(t, be.announced, "nothing announced any more")
	assert.NoError(t, be.dropCtxErr, "the drop runs with a live context")
}

// cancellingPrefetch cancels the Prove's context when its fused call
// returns and records the context error its last Prefetch saw.
type cancellingPrefetch struct {
	prefetchCPU
	cancel     context.CancelFunc
	dropCtxErr error
}

func (b *cancellingPrefetch) Prefetch(ctx context.Context, scalars ...[]fr.Element) error {
	b.dropCtxErr = ctx.Err()
	return b.prefetchCPU.Prefetch(ctx, scalars...)
}

func (b *cancellingPrefetch) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	p, err := b.prefetchCPU.MSMQuotientLH(ctx, lh, private, a, bv, c)
	b.cancel()
	return p, err
}
