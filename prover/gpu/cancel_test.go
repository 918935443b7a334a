package gpu

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// countdown is a context that turns cancelled at its (live+1)-th Err call,
// so that a test stops a call at each of its checks in turn; Done closes
// then, so that contexts derived from it follow.
type countdown struct {
	context.Context
	live  int32
	calls atomic.Int32
	once  sync.Once
	done  chan struct{}
}

func newCountdown(live int32) *countdown {
	return &countdown{Context: context.Background(), live: live, done: make(chan struct{})}
}

func (c *countdown) Done() <-chan struct{} { return c.done }

func (c *countdown) Err() error {
	if c.calls.Add(1) > c.live {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

// stopEachCheck runs call with a countdown context live for 0, 1, 2, …
// checks until it succeeds: every earlier run must fail with
// context.Canceled and be followed by a run with a live context, which
// check verifies. It returns how many checks the call made.
func stopEachCheck(t *testing.T, call func(ctx context.Context) error, check func()) int32 {
	t.Helper()
	for live := int32(0); live < 64; live++ {
		err := call(newCountdown(live))
		if err == nil {
			check()
			return live
		}
		require.ErrorIs(t, err, context.Canceled, "live for %d checks", live)
		require.NoError(t, call(context.Background()), "the call after one stopped at check %d", live)
		check()
	}
	require.FailNow(t, "the call never finished")
	return 0
}

// Each Backend call stopped at each of its checks between kernels and
// stages returns context.Canceled; the next call on the same Backend gives
// the CPU backend's result.
func TestCancelEachCheckGPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	const logN = 12
	n := 1 << logN
	ctx := context.Background()
	a, bv, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
	wantH, err := ref.QuotientH(ctx, clone(a), clone(bv), clone(c))
	require.NoError(t, err)
	var gotH []fr.Element
	checks := stopEachCheck(t, func(ctx context.Context) (err error) {
		gotH, err = b.QuotientH(ctx, clone(a), clone(bv), clone(c))
		return err
	}, func() { requireSameVector(t, wantH, gotH, "h after a stopped quotient") })
	assert.GreaterOrEqual(t, checks, int32(5), "quotient checks")

	private := pinnedCopy(t, b, randScalars(n-3, rng))
	wire := pinnedCopy(t, b, randScalars(n-1, rng))
	lh := randG1(len(private)+n-1, 64, rng)
	basesA := randG1(len(wire), 64, rng)
	g2 := randG2(len(wire), 16, rng)
	wantLH, err := ref.MSMG1(ctx, lh, append(clone(private), wantH[:n-1]...))
	require.NoError(t, err)
	wantA, err := ref.MSMG1(ctx, basesA, clone(wire))
	require.NoError(t, err)
	wantB2, err := ref.MSMG2(ctx, g2, clone(wire))
	require.NoError(t, err)
	// The fused call with a prefetch: a stopped call must drop what it sent
	// ahead, and the MSMs after it must read the right scalars either way.
	checks = stopEachCheck(t, func(ctx context.Context) error {
		if err := b.Prefetch(context.Background(), wire); err != nil {
			return err
		}
		got, err := b.MSMQuotientLH(ctx, lh, private, clone(a), clone(bv), clone(c))
		if err == nil && !got.Equal(&wantLH) {
			t.Error("fused L‖H differs from the CPU backend's")
		}
		return err
	}, func() {
		got, err := b.MSMG1(context.Background(), basesA, wire)
		require.NoError(t, err)
		assert.True(t, got.Equal(&wantA), "A after a fused call")
	})
	assert.GreaterOrEqual(t, checks, int32(8), "fused call checks")
	assert.Zero(t, aheadCount(t, b), "nothing left ahead")

	checks = stopEachCheck(t, func(ctx context.Context) error {
		g1, g2Sum, err := b.MSMB(ctx, basesA, g2, wire)
		if err == nil && (!g1.Equal(&wantA) || !g2Sum.Equal(&wantB2)) {
			t.Error("MSMB differs from the CPU backend's")
		}
		return err
	}, func() {})
	assert.GreaterOrEqual(t, checks, int32(8), "MSMB checks")
}

// provingFixture is a small circuit's keys, the CPU backend's proof for the
// blinding seed 7 and a way to solve fresh assignments.
type provingFixture struct {
	pk    *groth16.ProvingKey
	vk    *groth16.VerifyingKey
	solve func() *r1cs.Assignment
	want  []byte
}

func newProvingFixture(t *testing.T) provingFixture {
	t.Helper()
	c := &r1cstest.MulChain{N: 700, Seed: fr.NewElement(5)}
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	pk, vk, err := groth16.Setup(sys, rand.NewChaCha8([32]byte{1}))
	require.NoError(t, err)
	f := provingFixture{pk: pk, vk: vk, solve: func() *r1cs.Assignment {
		asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
		require.NoError(t, err)
		return asg
	}}
	ref, err := cpu.New()
	require.NoError(t, err)
	proof, err := groth16.Prove(context.Background(), pk, f.solve(), ref, blinding())
	require.NoError(t, err)
	f.want = proofBytes(t, proof)
	return f
}

// blinding is the randomness of the fixture's proofs.
func blinding() *rand.ChaCha8 { return rand.NewChaCha8([32]byte{7}) }

func proofBytes(t *testing.T, p *groth16.Proof) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := p.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// A Prove on the GPU backend with a cancelled context returns at once; one
// stopped at each check in turn (Prove's stages, the backend's kernels and
// stages) returns context.Canceled, and the next Prove on the same backend
// and pinned workspace gives the CPU backend's proof.
func TestProveCancelGPU(t *testing.T) {
	b, _, _ := chunkedBackend(t)
	f := newProvingFixture(t)
	ws := groth16.NewWorkspace(b)
	t.Cleanup(func() { require.NoError(t, ws.Close()) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err := groth16.Prove(ctx, f.pk, f.solve(), b, blinding(), groth16.WithWorkspace(ws))
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 50*time.Millisecond, "a cancelled Prove returns at once")

	prove := func(ctx context.Context) error {
		proof, err := groth16.Prove(ctx, f.pk, f.solve(), b, blinding(), groth16.WithWorkspace(ws))
		if err == nil {
			require.NoError(t, groth16.Verify(f.vk, proof, f.solve().PublicInputs()))
			assert.Equal(t, f.want, proofBytes(t, proof), "GPU proof equals the CPU proof")
		}
		return err
	}
	checks := stopEachCheck(t, prove, func() {})
	// Prove's stages (start, G1 MSMs, assembly), the Prefetch, and the
	// fused call's uploads, transforms and MSM stages count down; the A
	// and B MSMs run under Prove's errgroup context, which follows the
	// countdown's Done asynchronously and does not count.
	assert.GreaterOrEqual(t, checks, int32(12), "checks in one Prove")
}
