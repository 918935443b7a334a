package groth16_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// fusedCPU is the CPU backend as a QuotientLHBackend: MSMQuotientLH is
// QuotientH then one MSM over private ‖ h, as its contract states. It counts
// the calls of each kind.
type fusedCPU struct {
	*cpu.Backend
	quotients, fused atomic.Int32
}

func (b *fusedCPU) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	b.quotients.Add(1)
	return b.Backend.QuotientH(ctx, a, bv, c)
}

func (b *fusedCPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	b.fused.Add(1)
	if len(lh) != len(private)+len(a)-1 {
		return bls12381.G1Jac{}, fmt.Errorf("%d L‖H bases for %d privates and a domain of %d", len(lh), len(private), len(a))
	}
	h, err := b.Backend.QuotientH(ctx, a, bv, c)
	if err != nil {
		return bls12381.G1Jac{}, err
	}
	return b.Backend.MSMG1(ctx, lh, append(append([]fr.Element(nil), private...), h[:len(a)-1]...))
}

// A QuotientLHBackend gets one fused call in place of QuotientH and the L‖H
// MSM for keys with L and H adjacent, QuotientH for keys with them apart,
// and the proofs are those of the plain backend either way.
func TestProveWithQuotientLHBackend(t *testing.T) {
	c := &r1cstest.MulChain{N: 40, Seed: fr.NewElement(6)}
	f := setup(t, c)
	apart := *f.pk
	apart.G1.L = append([]bls12381.G1Affine(nil), f.pk.G1.L...)
	apart.G1.H = append([]bls12381.G1Affine(nil), f.pk.G1.H...)
	byHand := apart // L and H apart, then joined again by SetLH
	byHand.SetLH(append(append([]bls12381.G1Affine(nil), f.pk.G1.L...), f.pk.G1.H...))
	want, _ := prove(t, f, c, seeded(7))
	for _, tc := range []struct {
		name                   string
		pk                     *groth16.ProvingKey
		wantQuotient, wantFuse int32
	}{{"adjacent", f.pk, 0, 1}, {"apart", &apart, 1, 0}, {"SetLH", &byHand, 0, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
			require.NoError(t, err)
			inner, err := cpu.New()
			require.NoError(t, err)
			be := &fusedCPU{Backend: inner}
			var pt groth16.PhaseTimes
			got, err := groth16.Prove(groth16.WithTrace(context.Background(), pt.Trace()), tc.pk, asg, be, seeded(7),
				groth16.WithWorkspace(&groth16.Workspace{}))
			require.NoError(t, err)
			require.NoError(t, groth16.Verify(f.vk, got, asg.PublicInputs()))
			assert.Equal(t, encode(t, want), encode(t, got))
			assert.Equal(t, tc.wantQuotient, be.quotients.Load(), "QuotientH calls")
			assert.Equal(t, tc.wantFuse, be.fused.Load(), "MSMQuotientLH calls")
			d := pt.Durations()
			assert.Equal(t, tc.wantQuotient == 1, d[groth16.PhaseQuotient] > 0, "the quotient is a phase apart only when not fused")
			assert.Equal(t, tc.wantFuse == 1, d[groth16.PhaseQuotientLH] > 0, "the fused call is a phase")
			assert.Equal(t, tc.wantFuse == 0, d[groth16.PhaseMSMLH] > 0, "the L‖H MSM is a phase apart only when not fused")
		})
	}
}

// proveSetup returns a fixture for a multiplication chain of witness seed
// c, the plain backend's proof for blinding seed r, and a fresh assignment
// and CPU backend to prove it again with.
func proveSetup(t *testing.T, c, r uint64) (fixture, *groth16.Proof, *r1cs.Assignment, *cpu.Backend) {
	t.Helper()
	circuit := &r1cstest.MulChain{N: 40, Seed: fr.NewElement(c)}
	f := setup(t, circuit)
	want, _ := prove(t, f, circuit, seeded(r))
	asg, err := r1cs.Solve(circuit, r1cs.WithShape(f.sys))
	require.NoError(t, err)
	inner, err := cpu.New()
	require.NoError(t, err)
	return f, want, asg, inner
}

// pairCPU is the CPU backend as a BPairBackend: MSMB is the two MSMs, as its
// contract states. It counts the calls of each kind.
type pairCPU struct {
	*cpu.Backend
	g2, pairs atomic.Int32
}

func (b *pairCPU) MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	b.g2.Add(1)
	return b.Backend.MSMG2(ctx, bases, scalars)
}

func (b *pairCPU) MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars []fr.Element) (
	bls12381.G1Jac, bls12381.G2Jac, error) {
	b.pairs.Add(1)
	if len(g1) != len(scalars) || len(g2) != len(scalars) {
		return bls12381.G1Jac{}, bls12381.G2Jac{}, fmt.Errorf("%d G1 and %d G2 bases for %d scalars", len(g1), len(g2), len(scalars))
	}
	p1, err := b.Backend.MSMG1(ctx, g1, scalars)
	if err != nil {
		return p1, bls12381.G2Jac{}, err
	}
	p2, err := b.Backend.MSMG2(ctx, g2, scalars)
	return p1, p2, err
}

// A BPairBackend gets one MSMB call in place of B₁'s MSMG1 and the MSMG2,
// the proof is the plain backend's, and the pair is one phase.
func TestProveWithBPairBackend(t *testing.T) {
	f, want, asg, inner := proveSetup(t, 8, 9)
	be := &pairCPU{Backend: inner}
	var pt groth16.PhaseTimes
	got, err := groth16.Prove(groth16.WithTrace(context.Background(), pt.Trace()), f.pk, asg, be, seeded(9))
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(f.vk, got, asg.PublicInputs()))
	assert.Equal(t, encode(t, want), encode(t, got))
	assert.Equal(t, int32(1), be.pairs.Load(), "MSMB calls")
	assert.Zero(t, be.g2.Load(), "MSMG2 calls")
	d := pt.Durations()
	assert.NotZero(t, d[groth16.PhaseMSMBPair])
	assert.NotContains(t, d, groth16.PhaseMSMB1)
	assert.NotContains(t, d, groth16.PhaseMSMB2)
}

// prefetchCPU is fusedCPU as a Prefetcher: it logs the calls in order and
// keeps the announced vectors.
type prefetchCPU struct {
	fusedCPU
	mu        sync.Mutex
	calls     []string
	announced [][]fr.Element
}

func (b *prefetchCPU) log(call string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, call)
}

func (b *prefetchCPU) Prefetch(ctx context.Context, scalars ...[]fr.Element) error {
	b.log("prefetch")
	b.announced = scalars
	return nil
}

func (b *prefetchCPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	b.log("quotient+L‖H")
	return b.fusedCPU.MSMQuotientLH(ctx, lh, private, a, bv, c)
}

func (b *prefetchCPU) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	for i, v := range b.announced {
		if len(v) == len(scalars) && &v[0] == &scalars[0] {
			b.log(fmt.Sprintf("msm announced %d", i))
			return b.fusedCPU.MSMG1(ctx, bases, scalars)
		}
	}
	b.log("msm")
	return b.fusedCPU.MSMG1(ctx, bases, scalars)
}

// A Prefetcher is told the A and B wires before the fused call, which Prove
// makes first, then the A MSM, then B's; the G1 MSMs over A and B use the
// announced slices, and the proof is the plain backend's.
func TestProveWithPrefetcher(t *testing.T) {
	f, want, asg, inner := proveSetup(t, 10, 11)
	be := &prefetchCPU{fusedCPU: fusedCPU{Backend: inner}}
	got, err := groth16.Prove(context.Background(), f.pk, asg, be, seeded(11))
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(f.vk, got, asg.PublicInputs()))
	assert.Equal(t, encode(t, want), encode(t, got))
	require.Len(t, be.calls, 4, "%v", be.calls)
	assert.Equal(t, []string{"prefetch", "quotient+L‖H", "msm announced 0", "msm announced 1"}, be.calls,
		"the fused call, then A, then B₁, over the announced wires")
	require.Len(t, be.announced, 2)
	assert.Len(t, be.announced[0], len(f.pk.G1.A), "the A wires")
	assert.Len(t, be.announced[1], len(f.pk.G1.B), "the B wires")
}

// privateSeen is fusedCPU recording where the private wires of its fused
// call lie.
type privateSeen struct {
	*fusedCPU
	private *fr.Element
}

func (b *privateSeen) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	b.private = unsafe.SliceData(private)
	return b.fusedCPU.MSMQuotientLH(ctx, lh, private, a, bv, c)
}

// An assignment whose Public‖Private is one vector (r1cs's Wires) is proved
// from that vector: a fused backend gets its private part itself and the
// workspace allocates no wire vector; the proofs equal those of the same
// values apart, fused or not.
func TestProveReadsTheWireVectorInPlace(t *testing.T) {
	c := &r1cstest.MulChain{N: 40, Seed: fr.NewElement(8)}
	f := setup(t, c)
	want, _ := prove(t, f, c, seeded(3))
	solve := func(joint bool) *r1cs.Assignment {
		asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
		require.NoError(t, err)
		require.NotNil(t, asg.WireVector())
		if !joint {
			asg.Public = append([]fr.Element(nil), asg.Public...)
			asg.Private = append([]fr.Element(nil), asg.Private...)
			require.Nil(t, asg.WireVector())
		}
		return asg
	}
	for _, fused := range []bool{true, false} {
		allocs := map[bool]int{}
		for _, joint := range []bool{true, false} {
			t.Run(fmt.Sprintf("fused=%t/joint=%t", fused, joint), func(t *testing.T) {
				asg := solve(joint)
				inner, err := cpu.New()
				require.NoError(t, err)
				be := &privateSeen{fusedCPU: &fusedCPU{Backend: inner}}
				var backend groth16.Backend = inner
				if fused {
					backend = be
				}
				alloc := newHeapAllocator()
				got, err := groth16.Prove(context.Background(), f.pk, asg, backend, seeded(3),
					groth16.WithWorkspace(groth16.NewWorkspace(alloc)))
				require.NoError(t, err)
				assert.Equal(t, encode(t, want), encode(t, got))
				allocs[joint] = alloc.allocs
				if fused {
					assert.Equal(t, joint, be.private == unsafe.SliceData(asg.Private), "the fused call reads asg's own private wires")
				}
			})
		}
		if fused {
			assert.Equal(t, allocs[false]-1, allocs[true], "no wire vector allocated for a joint assignment")
		} else {
			assert.Equal(t, allocs[false], allocs[true], "public‖private‖h is allocated either way")
		}
	}
}
