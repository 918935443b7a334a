package gpu

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/testseed"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

var _ groth16.QuotientLHBackend = (*Backend)(nil)

// sharedDevice opens GPU 0 once for the whole test binary.
var sharedDevice = sync.OnceValues(driver.OpenTestDevice)

// testDevice returns GPU 0, skipping the test visibly where there is none.
func testDevice(t testing.TB) *driver.Device {
	t.Helper()
	dev, err := sharedDevice()
	if errors.Is(err, driver.ErrNoGPU) {
		t.Skipf("no CUDA GPU on this machine: %v", err)
	}
	require.NoError(t, err)
	return dev
}

var sharedBackend = sync.OnceValues(func() (*Backend, error) {
	dev, err := sharedDevice()
	if err != nil {
		return nil, err
	}
	return New(dev)
})

// testBackend returns a Backend on GPU 0 shared by the tests.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	testDevice(t)
	b, err := sharedBackend()
	require.NoError(t, err)
	return b
}

// requireSameVector fails at the first index where got differs from want.
func requireSameVector(t testing.TB, want, got []fr.Element, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if want[i] != got[i] {
			require.Failf(t, "vectors differ", "%s: first difference at index %d of %d: want %s, got %s",
				what, i, len(want), want[i].String(), got[i].String())
		}
	}
}

// testSizes are the transform sizes (log2) the GPU tests run.
func testSizes() []uint32 {
	top := uint32(16)
	if testing.Short() {
		top = 12
	}
	var s []uint32
	for l := uint32(1); l <= top; l++ {
		s = append(s, l)
	}
	return s
}

func TestNTTMatchesGnark(t *testing.T) {
	b := testBackend(t)
	for _, logN := range testSizes() {
		for _, kind := range []inputKind{inputRandom, inputZero, inputConstant} {
			if kind != inputRandom && logN%5 != 1 { // zero/constant at 2^1, 2^6, 2^11, 2^16
				continue
			}
			t.Run(fmt.Sprintf("2^%d/%s", logN, kind), func(t *testing.T) {
				in := newVector(t, 1<<logN, kind)
				for _, op := range []struct {
					name           string
					inverse, coset bool
				}{{"ntt", false, false}, {"intt", true, false}, {"coset-ntt", false, true}, {"coset-intt", true, true}} {
					got := append([]fr.Element(nil), in...)
					var err error
					if op.inverse {
						err = b.INTT(got, op.coset)
					} else {
						err = b.NTT(got, op.coset)
					}
					require.NoError(t, err, op.name)
					want := refNTT(in, op.coset)
					if op.inverse {
						want = refINTT(in, op.coset)
					}
					requireSameVector(t, want, got, op.name)
				}
			})
		}
	}
}

// TestTimeNTTTransformsTheResidentVector checks that TimeNTT's timed work is
// the transform: after a warm-up and 3 runs the device vector must be the
// 4-fold transform of the input, which itself is left as it was.
func TestTimeNTTTransformsTheResidentVector(t *testing.T) {
	b := testBackend(t)
	const logN, runs = 12, 3
	for _, inverse := range []bool{false, true} {
		in := newVector(t, 1<<logN, inputRandom)
		orig := append([]fr.Element(nil), in...)
		ts, err := b.TimeNTT(in, inverse, runs)
		require.NoError(t, err)
		require.Len(t, ts, runs)
		for _, d := range ts {
			assert.Positive(t, d, "device time")
		}
		requireSameVector(t, orig, in, "TimeNTT's input")
		want := orig
		for range runs + 1 {
			if inverse {
				want = refINTT(want, false)
			} else {
				want = refNTT(want, false)
			}
		}
		got := make([]fr.Element, len(in))
		require.NoError(t, b.dev.Do(func(c *driver.Ctx) error {
			return c.DtoH(driver.Bytes(got), b.st.vecs[(runs+1)%2])
		}))
		requireSameVector(t, want, got, fmt.Sprintf("device vector after TimeNTT (inverse %v)", inverse))
	}
}

func TestQuotientHMatchesCPU(t *testing.T) {
	b := testBackend(t)
	ref, err := cpu.New()
	require.NoError(t, err)
	for _, logN := range testSizes() {
		for _, kind := range []inputKind{inputRandom, inputZero, inputConstant} {
			if kind != inputRandom && logN%5 != 1 {
				continue
			}
			t.Run(fmt.Sprintf("2^%d/%s", logN, kind), func(t *testing.T) {
				n := 1 << logN
				a, bv, c := newVector(t, n, kind), newVector(t, n, inputRandom), newVector(t, n, kind)
				want, err := ref.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
				require.NoError(t, err)
				bIn, cIn := clone(bv), clone(c)
				got, err := b.QuotientH(context.Background(), a, bv, c)
				require.NoError(t, err)
				requireSameVector(t, want, got, "h")
				assert.Same(t, &a[0], &got[0], "h is written into a's storage")
				assert.Equal(t, bIn, bv, "b unchanged")
				assert.Equal(t, cIn, c, "c unchanged")
			})
		}
	}
}

// A satisfied system (c = a·b on H) has a·b − c divisible by Z, so h has
// degree ≤ n−2: its top coefficient is zero while the others are not all zero.
func TestQuotientHSatisfiedHasZeroTop(t *testing.T) {
	b := testBackend(t)
	for _, logN := range []uint32{1, 2, 5, 10, 15} {
		n := 1 << logN
		a, bv := newVector(t, n, inputRandom), newVector(t, n, inputRandom)
		c := make([]fr.Element, n)
		for i := range c {
			c[i].Mul(&a[i], &bv[i])
		}
		h, err := b.QuotientH(context.Background(), a, bv, c)
		require.NoError(t, err)
		assert.True(t, h[n-1].IsZero(), "2^%d: top coefficient", logN)
		if n > 2 {
			assert.NotEqual(t, make([]fr.Element, n), h, "2^%d: h is not all zero", logN)
		}
	}
}

func TestMemoryLimitRefusesBeforeAllocating(t *testing.T) {
	dev := testDevice(t)
	b, err := New(dev, WithMemoryLimit(1<<20))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	n := 1 << 16 // needs QuotientHBytes(16) ≈ 7 MiB
	_, err = b.QuotientH(context.Background(), make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n))
	require.ErrorIs(t, err, ErrDeviceMemory)
	require.NoError(t, dev.Do(func(c *driver.Ctx) error {
		assert.Zero(t, b.st.mem.held, "nothing was allocated")
		return nil
	}))
}

// The memory limit covers the Backend's MSM engine: an MSM whose bases and
// scratch exceed it is refused before allocating, and a limit with room for
// a few copies of the bases cuts their table of multiples to fit.
func TestMemoryLimitCoversMSM(t *testing.T) {
	dev := testDevice(t)
	rng := newTestRand(testseed.Seed(t))
	const n = 1 << 14
	bases, scalars := randG1(n, 64, rng), randScalars(n, rng)
	small, err := New(dev, WithMemoryLimit(1<<20))
	require.NoError(t, err)
	defer func() { require.NoError(t, small.Close()) }()
	_, err = small.MSMG1(context.Background(), bases, scalars)
	require.ErrorIs(t, err, ErrDeviceMemory)
	require.NoError(t, dev.Do(func(c *driver.Ctx) error {
		assert.Zero(t, small.st.mem.held, "nothing was allocated")
		return nil
	}))

	plain, scratch, err := MSMBytes(n, false, 0)
	require.NoError(t, err)
	full, _, err := MSMBytes(n, false, 1<<40)
	require.NoError(t, err)
	limit := 4*plain + scratch
	b, err := New(dev, WithMemoryLimit(limit), WithMSMTableMemory(1<<40))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	var log msmLog
	got, err := b.MSMG1(log.context(), bases, scalars)
	require.NoError(t, err)
	var want bls12381.G1Jac
	_, err = want.MultiExp(bases, scalars, ecc.MultiExpConfig{})
	require.NoError(t, err)
	assert.True(t, got.Equal(&want), "GPU G1 MSM under a memory limit differs from gnark-crypto")
	rec := log.last(t)
	assert.Greater(t, rec.Copies, 1, "room for a few copies")
	assert.Less(t, int64(rec.Copies), full/plain, "fewer copies than a full table")
	var held int64
	require.NoError(t, dev.Do(func(c *driver.Ctx) error {
		assert.LessOrEqual(t, b.st.mem.held, limit)
		assert.Positive(t, b.st.mem.held)
		held = b.st.mem.held
		return nil
	}))
	now, peak := b.MemoryHeld()
	assert.Equal(t, held, now, "MemoryHeld reads the account off the device thread")
	assert.GreaterOrEqual(t, peak, now)
	assert.LessOrEqual(t, peak, limit, "the peak stayed within the limit too")
	require.NoError(t, b.EvictBasesOf([][]bls12381.G1Affine{bases}, nil))
	after, peakAfter := b.MemoryHeld()
	assert.Less(t, after, now, "evicting the bases lowers what is held")
	assert.Equal(t, peak, peakAfter, "the peak stays")
}

func clone(v []fr.Element) []fr.Element { return append([]fr.Element(nil), v...) }

// The Backend's MSMs delegate to the MSM engine; the results must equal the
// CPU backend's as group elements.
func TestBackendMSMMatchesCPU(t *testing.T) {
	b := testBackend(t)
	ref, err := cpu.New()
	require.NoError(t, err)
	rng := newTestRand(testseed.Seed(t))
	for _, n := range []int{1, 3, 1000} {
		scalars := randScalars(n, rng)
		g1 := randG1(n, min(n, 64), rng)
		got1, err := b.MSMG1(context.Background(), g1, scalars)
		require.NoError(t, err, "g1 n=%d", n)
		want1, err := ref.MSMG1(context.Background(), g1, scalars)
		require.NoError(t, err)
		assert.True(t, got1.Equal(&want1), "g1 n=%d", n)

		g2 := randG2(n, min(n, 16), rng)
		got2, err := b.MSMG2(context.Background(), g2, scalars)
		require.NoError(t, err, "g2 n=%d", n)
		want2, err := ref.MSMG2(context.Background(), g2, scalars)
		require.NoError(t, err)
		assert.True(t, got2.Equal(&want2), "g2 n=%d", n)
	}
}

// Where three work vectors do not fit the memory limit, QuotientH runs
// lean, in two (a·b first, then c in b's vector), and its h equals the CPU
// backend's; the Backend holds two vectors and stays within the limit, and
// a second quotient reuses them.
func TestLeanQuotientMatchesCPU(t *testing.T) {
	dev := testDevice(t)
	ref, err := cpu.New()
	require.NoError(t, err)
	for _, logN := range testSizes() {
		t.Run(fmt.Sprintf("2^%d", logN), func(t *testing.T) {
			limit := QuotientHLeanBytes(logN)
			require.Less(t, limit, QuotientHBytes(logN))
			b, err := New(dev, WithMemoryLimit(limit))
			require.NoError(t, err)
			defer func() { require.NoError(t, b.Close()) }()
			n := 1 << logN
			for run := range 2 {
				a, bv, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
				want, err := ref.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
				require.NoError(t, err)
				bIn, cIn := clone(bv), clone(c)
				got, err := b.QuotientH(context.Background(), a, bv, c)
				require.NoError(t, err, "run %d", run)
				requireSameVector(t, want, got, fmt.Sprintf("h, run %d", run))
				assert.Equal(t, bIn, bv, "b unchanged")
				assert.Equal(t, cIn, c, "c unchanged")
			}
			require.NoError(t, dev.Do(func(*driver.Ctx) error {
				assert.Equal(t, 2, b.st.nvec, "two work vectors")
				assert.Zero(t, b.st.vecs[2])
				return nil
			}))
			_, peak := b.MemoryHeld()
			assert.LessOrEqual(t, peak, limit)
		})
	}
}

// ReserveDriverMemory lowers the limit by the driver's own memory, so that
// a proof under a key plan keeps the device's whole use by the driver's
// count (free memory before New against after the proofs) within the
// limit; a limit too small for the driver's part and the warm-up is
// refused.
func TestReserveDriverMemoryKeepsTheDeviceWithinTheLimit(t *testing.T) {
	dev := testDevice(t)
	f := newProvingFixture(t)
	g1, g2 := f.pk.Bases()
	logN := uint32(bits.Len(uint(f.pk.DomainSize - 1)))
	free0 := freeMemory(t, dev)
	limit := int64(1 << 30)
	b, err := New(dev, WithMemoryLimit(limit))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	own, err := b.ReserveDriverMemory(context.Background())
	require.NoError(t, err)
	assert.Positive(t, own, "the modules' code at least")
	t.Logf("the driver's own device memory: %d bytes", own)
	require.NoError(t, dev.Do(func(*driver.Ctx) error {
		assert.Equal(t, limit-own, b.st.mem.limit)
		return nil
	}))
	kp, err := b.PlanKey(g1, g2, logN)
	require.NoError(t, err)
	assert.LessOrEqual(t, kp.Budget, limit-own, "the plan's budget leaves the driver's part")
	proof, err := groth16.Prove(context.Background(), f.pk, f.solve(), b, blinding())
	require.NoError(t, err)
	require.Equal(t, f.want, proofBytes(t, proof))
	assert.LessOrEqual(t, free0-freeMemory(t, dev), limit+driverSlack, "the device's use by the driver's count")

	// The fixed-base kernels (a development setup's) are not in the
	// warm-up: reserving again after them measures anew, from the
	// configured limit, not from the lowered one.
	sc := randScalars(5, newTestRand(1))
	_, _, gen1, gen2 := bls12381.Generators()
	_, err = b.FixedBaseG1(context.Background(), &gen1, sc)
	require.NoError(t, err)
	_, err = b.FixedBaseG2(context.Background(), &gen2, sc)
	require.NoError(t, err)
	own2, err := b.ReserveAgain()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, own2, own, "the fixed-base modules added to the driver's part")
	t.Logf("the driver's part after the fixed-base kernels: %d bytes (+%d)", own2, own2-own)
	require.NoError(t, dev.Do(func(*driver.Ctx) error {
		assert.Equal(t, limit-own2, b.st.mem.limit, "set from the configured limit, once")
		return nil
	}))

	// The kernels' local memory belongs to the context, which every
	// Backend on the device shares: a second Backend's part is its modules'
	// code only (about 2 MB), which 64 KiB cannot hold.
	small, err := New(dev, WithMemoryLimit(64<<10))
	require.NoError(t, err)
	defer func() { require.NoError(t, small.Close()) }()
	_, err = small.ReserveDriverMemory(context.Background())
	require.ErrorIs(t, err, ErrDeviceMemory)
}
