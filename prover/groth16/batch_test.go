package groth16_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// batchCPU is the CPU backend as a BatchBackend (and, with fused, a
// QuotientLHBackend): each batch call is the single calls in turn, as its
// contract states. It logs the calls in order; fail makes the batch calls
// fail.
type batchCPU struct {
	fusedCPU
	fused bool
	fail  error
	mu    sync.Mutex
	calls []string
}

func (b *batchCPU) log(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, s)
}

func (b *batchCPU) logged() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

func (b *batchCPU) MSMG1Batch(ctx context.Context, bases []bls12381.G1Affine, scalars [][]fr.Element) ([]bls12381.G1Jac, error) {
	b.log(fmt.Sprintf("batch G1 %d", len(scalars)))
	if b.fail != nil {
		return nil, b.fail
	}
	out := make([]bls12381.G1Jac, len(scalars))
	for i, s := range scalars {
		var err error
		if out[i], err = b.Backend.MSMG1(ctx, bases, s); err != nil {
			return nil, err
		}
	}
	groth16.PhaseDone(ctx, groth16.PhaseInfo{Phase: groth16.PhaseMSMAccumulate, Duration: 3000})
	return out, nil
}

func (b *batchCPU) MSMBBatch(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars [][]fr.Element) (
	[]bls12381.G1Jac, []bls12381.G2Jac, error) {
	b.log(fmt.Sprintf("batch B %d", len(scalars)))
	if b.fail != nil {
		return nil, nil, b.fail
	}
	r1, r2 := make([]bls12381.G1Jac, len(scalars)), make([]bls12381.G2Jac, len(scalars))
	for i, s := range scalars {
		var err error
		if r1[i], err = b.Backend.MSMG1(ctx, g1, s); err != nil {
			return nil, nil, err
		}
		if r2[i], err = b.Backend.MSMG2(ctx, g2, s); err != nil {
			return nil, nil, err
		}
	}
	return r1, r2, nil
}

// unfusedBatchCPU is batchCPU without MSMQuotientLH.
type unfusedBatchCPU struct{ b *batchCPU }

func (u unfusedBatchCPU) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	u.b.log("quotient")
	return u.b.Backend.QuotientH(ctx, a, bv, c)
}
func (u unfusedBatchCPU) MSMG1(ctx context.Context, bases []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	return u.b.Backend.MSMG1(ctx, bases, s)
}
func (u unfusedBatchCPU) MSMG2(ctx context.Context, bases []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	return u.b.Backend.MSMG2(ctx, bases, s)
}
func (u unfusedBatchCPU) MSMG1Batch(ctx context.Context, bases []bls12381.G1Affine, s [][]fr.Element) ([]bls12381.G1Jac, error) {
	return u.b.MSMG1Batch(ctx, bases, s)
}
func (u unfusedBatchCPU) MSMBBatch(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, s [][]fr.Element) (
	[]bls12381.G1Jac, []bls12381.G2Jac, error) {
	return u.b.MSMBBatch(ctx, g1, g2, s)
}

func (b *batchCPU) MSMQuotientLH(ctx context.Context, lh []bls12381.G1Affine, private, a, bv, c []fr.Element) (bls12381.G1Jac, error) {
	b.log("quotient+L‖H")
	return b.fusedCPU.MSMQuotientLH(ctx, lh, private, a, bv, c)
}

// batchFixture is a key and the witnesses of n proofs under it (one
// circuit shape, n seeds), with the proofs Prove makes of them in turn
// from one blinding stream (seed r).
type batchFixture struct {
	f     fixture
	n     int
	chain func(i int) r1cs.Circuit
	want  [][]byte
}

func newBatchFixture(t *testing.T, n int, r uint64) batchFixture {
	chain := func(i int) r1cs.Circuit { return &r1cstest.MulChain{N: 40, Seed: fr.NewElement(uint64(30 + i))} }
	bf := batchFixture{f: setup(t, chain(0)), n: n, chain: chain}
	rnd := seeded(r)
	be, err := cpu.New()
	require.NoError(t, err)
	for i := range n {
		p, err := groth16.Prove(context.Background(), bf.f.pk, bf.solve(t, i), be, rnd)
		require.NoError(t, err)
		bf.want = append(bf.want, encode(t, p))
	}
	return bf
}

func (bf batchFixture) solve(t *testing.T, i int) *r1cs.Assignment {
	asg, err := r1cs.Solve(bf.chain(i), r1cs.WithShape(bf.f.sys))
	require.NoError(t, err)
	return asg
}

// batch returns n fresh proofs to batch, each freeing into log.
func (bf batchFixture) batch(t *testing.T, log func(string)) ([]groth16.BatchProof, [][]fr.Element) {
	out := make([]groth16.BatchProof, bf.n)
	pubs := make([][]fr.Element, bf.n)
	for i := range out {
		asg := bf.solve(t, i)
		pubs[i] = append([]fr.Element(nil), asg.PublicInputs()...)
		out[i] = groth16.BatchProof{Ctx: context.Background(), Asg: asg, Workspace: &groth16.Workspace{},
			Free: func() { log(fmt.Sprintf("free %d", i)) }}
	}
	return out, pubs
}

// A batch's proofs are those of Prove in turn from the same blinding
// stream, on a plain backend, a fused one, and a BatchBackend with and
// without the fused call; a BatchBackend gets one call per shared MSM for
// the whole batch, each proof's quotient and L‖H come first, one by one,
// and each assignment is freed once, before the shared calls where the
// batch no longer reads it.
func TestProveBatchEqualsProvesInTurn(t *testing.T) {
	bf := newBatchFixture(t, 3, 5)
	for _, kind := range []string{"plain", "fused", "batch", "batch-unfused"} {
		t.Run(kind, func(t *testing.T) {
			inner, err := cpu.New()
			require.NoError(t, err)
			bb := &batchCPU{fusedCPU: fusedCPU{Backend: inner}}
			var be groth16.Backend
			switch kind {
			case "plain":
				be = inner
			case "fused":
				be = &bb.fusedCPU
			case "batch":
				be = bb
			case "batch-unfused":
				be = unfusedBatchCPU{bb}
			}
			batch, pubs := bf.batch(t, bb.log)
			proofs, errs := groth16.ProveBatch(context.Background(), bf.f.pk, groth16.Batch{Proofs: batch}, be, seeded(5))
			for i := range batch {
				require.NoError(t, errs[i], "proof %d", i)
				require.NoError(t, groth16.Verify(bf.f.vk, proofs[i], pubs[i]), "proof %d", i)
				assert.Equal(t, bf.want[i], encode(t, proofs[i]), "proof %d equals Prove's in turn", i)
			}
			calls := bb.logged()
			for i := range batch {
				assert.Equal(t, 1, count(calls, fmt.Sprintf("free %d", i)), "proof %d freed once: %v", i, calls)
			}
			switch kind {
			case "batch":
				assert.Equal(t, 1, count(calls, "batch G1 3"), "%v", calls)
				assert.Equal(t, 1, count(calls, "batch B 3"), "%v", calls)
				assert.Equal(t, 3, count(calls, "quotient+L‖H"), "%v", calls)
				assert.Less(t, lastIndex(calls, "quotient+L‖H"), index(calls, "batch G1 3"), "every quotient first: %v", calls)
				// The fused backend reads the assignment's own wire vector:
				// its sets without points at infinity are copied into the
				// workspace, so every assignment still goes back before
				// the shared calls.
				require.NotNil(t, batch[0].Asg.WireVector(), "a solved assignment has its wire vector")
				for i := range batch {
					assert.Less(t, index(calls, fmt.Sprintf("free %d", i)), index(calls, "batch G1 3"), "%v", calls)
				}
			case "batch-unfused":
				// The wires are the workspace's copies: each assignment
				// goes back right after its own quotient.
				want := []string{"quotient", "free 0", "quotient", "free 1", "quotient", "free 2"}
				assert.Equal(t, want, calls[:6], "%v", calls)
				assert.ElementsMatch(t, []string{"batch G1 3", "batch B 3"}, calls[6:])
			}
		})
	}
}

// A batch that starts with one proof takes the proofs Join offers after
// each proof's own part, up to Max, and none once Join has none: the
// proofs equal Prove's in turn, the joined ones last, and the shared calls
// cover all of them.
func TestProveBatchJoins(t *testing.T) {
	bf := newBatchFixture(t, 4, 8)
	for _, tc := range []struct {
		name       string
		max, offer int // the batch's Max, the proofs Join has
		want       int // proofs in the batch
	}{{"up to max", 3, 3, 3}, {"join runs dry", 4, 1, 2}, {"max one", 1, 3, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := cpu.New()
			require.NoError(t, err)
			bb := &batchCPU{fusedCPU: fusedCPU{Backend: inner}}
			all, pubs := bf.batch(t, bb.log)
			next := 1
			join := func() (groth16.BatchProof, bool) {
				if next > tc.offer {
					return groth16.BatchProof{}, false
				}
				bb.log(fmt.Sprintf("join %d", next))
				next++
				return all[next-1], true
			}
			proofs, errs := groth16.ProveBatch(context.Background(), bf.f.pk, groth16.Batch{Proofs: all[:1], Join: join, Max: tc.max},
				bb, seeded(8))
			require.Len(t, proofs, tc.want)
			for i := range tc.want {
				require.NoError(t, errs[i])
				require.NoError(t, groth16.Verify(bf.f.vk, proofs[i], pubs[i]))
				assert.Equal(t, bf.want[i], encode(t, proofs[i]), "proof %d equals Prove's in turn", i)
			}
			calls := bb.logged()
			if tc.want > 1 {
				assert.Equal(t, 1, count(calls, fmt.Sprintf("batch G1 %d", tc.want)), "%v", calls)
				// Each join comes after the proof before has done its own part.
				assert.Less(t, index(calls, "quotient+L‖H"), index(calls, "join 1"), "%v", calls)
			} else {
				assert.Zero(t, count(calls, "join 1"), "a batch of at most one asks for none: %v", calls)
			}
		})
	}
}

func count(calls []string, s string) int {
	n := 0
	for _, c := range calls {
		if c == s {
			n++
		}
	}
	return n
}

func index(calls []string, s string) int {
	for i, c := range calls {
		if c == s {
			return i
		}
	}
	return -1
}

func lastIndex(calls []string, s string) int {
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i] == s {
			return i
		}
	}
	return -1
}

// A proof whose context is done leaves the batch with its context's error;
// the others are made as in turn, and the shared calls cover them alone.
// The shared calls' phases reach each proof's trace with Batch set and an
// equal share of the duration; a proof's own phases have Batch 0.
func TestProveBatchOneProofCancelled(t *testing.T) {
	bf := newBatchFixture(t, 3, 6)
	inner, err := cpu.New()
	require.NoError(t, err)
	bb := &batchCPU{fusedCPU: fusedCPU{Backend: inner}}
	batch, pubs := bf.batch(t, bb.log)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	batch[1].Ctx = cctx
	var pts [3]groth16.PhaseTimes
	for i := range batch {
		batch[i].Ctx = groth16.WithTrace(batch[i].Ctx, pts[i].Trace())
	}
	proofs, errs := groth16.ProveBatch(context.Background(), bf.f.pk, groth16.Batch{Proofs: batch}, bb, seeded(6))
	require.ErrorIs(t, errs[1], context.Canceled)
	assert.Nil(t, proofs[1])
	for _, i := range []int{0, 2} {
		require.NoError(t, errs[i])
		require.NoError(t, groth16.Verify(bf.f.vk, proofs[i], pubs[i]))
		assert.Equal(t, bf.want[i], encode(t, proofs[i]), "proof %d", i)
		var acc, own int
		for _, info := range pts[i].Infos() {
			switch {
			case info.Phase == groth16.PhaseMSMAccumulate:
				acc++
				assert.Equal(t, 2, info.Batch)
				assert.EqualValues(t, 1500, info.Duration, "an equal share of the call's 3000 ns")
			case info.Phase == groth16.PhaseQuotientLH:
				own++
				assert.Zero(t, info.Batch)
			}
		}
		assert.Equal(t, 1, acc, "proof %d: the shared call's phase", i)
		assert.Equal(t, 1, own, "proof %d: its own fused call", i)
	}
	calls := bb.logged()
	assert.Equal(t, 2, count(calls, "quotient+L‖H"), "%v", calls)
	assert.Equal(t, 1, count(calls, "batch G1 2"), "%v", calls)
	for i := range batch {
		assert.Equal(t, 1, count(calls, fmt.Sprintf("free %d", i)), "%v", calls)
	}
}

// A failing backend fails every proof of the batch, and every assignment
// is freed.
func TestProveBatchBackendFailure(t *testing.T) {
	bf := newBatchFixture(t, 2, 7)
	inner, err := cpu.New()
	require.NoError(t, err)
	boom := errors.New("device fault")
	bb := &batchCPU{fusedCPU: fusedCPU{Backend: inner}, fail: boom}
	batch, _ := bf.batch(t, bb.log)
	proofs, errs := groth16.ProveBatch(context.Background(), bf.f.pk, groth16.Batch{Proofs: batch}, bb, seeded(7))
	for i := range batch {
		assert.ErrorIs(t, errs[i], boom)
		assert.Nil(t, proofs[i])
		assert.Equal(t, 1, count(bb.logged(), fmt.Sprintf("free %d", i)))
	}
}
