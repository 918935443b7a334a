package gpu

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/testseed"
)

func TestMSMPlan(t *testing.T) {
	for _, n := range []int{1, 2, 3, 255, 1 << 10, 1<<16 + 1, 1 << 20, 1 << 24, 1 << 26, msmMaxPoints} {
		p, err := newMSMPlan(n, 50688) // the H200's G1 wave: 132 × 3 blocks of 128
		require.NoError(t, err, n)
		assert.GreaterOrEqual(t, p.nwin*p.c, uint32(256), "n=%d: windows cover the digits", n)
		assert.Less(t, (p.nwin-1)*p.c, uint32(256), "n=%d: no empty top window", n)
		assert.Equal(t, uint32(1)<<(p.c-1), p.nb)
		assert.True(t, p.k >= 1 && p.k <= p.nb, "n=%d: %d bucket_sum threads for %d buckets", n, p.k, p.nb)
		assert.LessOrEqual(t, p.nwin*p.k, uint32(50688), "n=%d: bucket sums in one wave", n)
		assert.Less(t, p.entries(), uint64(1)<<32, "n=%d: entries indexed in 32 bits", n)
		assert.GreaterOrEqual(t, p.t1, uint32(8))
	}
	for _, n := range []int{0, -1, msmMaxPoints + 1} {
		_, err := newMSMPlan(n, 50688)
		assert.Error(t, err, n)
	}
}

// A G2 chunk over bases without a table weighs its buckets more than the
// plain model (every chunk repeats the reduce and fold over them, and G2's
// cost more a bucket): at 2^23 points it takes 16-bit windows, as 2^22
// does, where the plain model took 19 bits (7 times the buckets); the
// bucket memory shrinks with it. G1 and tables keep the plain model.
func TestG2ChunkWindow(t *testing.T) {
	plain := msmTable{copies: 1, stride: 1 << 23}
	p, err := newMSMPlanTable(1<<23, plain, 0, 50688)
	require.NoError(t, err)
	assert.Equal(t, uint32(19), p.c, "the plain model at 2^23")
	g2, err := newMSMPlanWeighted(1<<23, plain, 0, 50688, msmCostBucketG2Chunk)
	require.NoError(t, err)
	assert.Equal(t, uint32(16), g2.c, "a G2 chunk of 2^23")
	assert.Less(t, g2.nseg, p.nseg)
	small, err := newMSMPlanWeighted(1<<22, msmTable{copies: 1, stride: 1 << 22}, 0, 50688, msmCostBucketG2Chunk)
	require.NoError(t, err)
	assert.Equal(t, uint32(16), small.c, "2^22 unchanged")
	forced, err := newMSMPlanWeighted(1<<23, plain, 19, 50688, msmCostBucketG2Chunk)
	require.NoError(t, err)
	assert.Equal(t, uint32(19), forced.c, "a forced window stays")
	table, err := newMSMTable(1<<23, 4, 0)
	require.NoError(t, err)
	tp, err := newMSMPlanWeighted(1<<23, table, 0, 50688, msmCostBucketG2Chunk)
	require.NoError(t, err)
	assert.Equal(t, table.c, tp.c, "a table's window is the table's")
}

func TestReducedRange(t *testing.T) {
	p, err := newMSMPlanWindow(1<<20, 16, 50688) // t1 = 64, 16 windows of 2^15 buckets, bands of 512
	require.NoError(t, err)
	require.Equal(t, uint32(64), p.t1)
	require.Equal(t, uint32(512), p.band)
	require.Equal(t, uint32(16*64), p.bands())
	maxima := func(set map[uint32]uint32) []uint32 {
		m := make([]uint32, p.bands())
		for i := range m {
			m[i] = 100 // two tasks: bucket_sum adds both partials
		}
		for i, v := range set {
			m[i] = v
		}
		return m
	}
	top := 15 * 64 // the top window's first band
	for _, tc := range []struct {
		name           string
		maxima         []uint32
		s0, s1, maxLen uint32
	}{
		{"random scalars, long top-window buckets", maxima(map[uint32]uint32{uint32(top): 1100, uint32(top + 1): 900}),
			15 << 15, 15<<15 + 1024, 18},
		{"no long bucket", maxima(nil), p.nseg, p.nseg, 0},
		{"exactly two tasks", maxima(map[uint32]uint32{7: 128}), p.nseg, p.nseg, 0},
		{"three tasks", maxima(map[uint32]uint32{7: 129}), 7 * 512, 8 * 512, 3},
		{"skewed low and high bands", maxima(map[uint32]uint32{0: 1 << 20, uint32(top): 200}), 0, 15<<15 + 512, 16384},
		{"empty windows", make([]uint32, p.bands()), p.nseg, p.nseg, 0},
	} {
		s0, s1, maxLen := p.reducedRange(tc.maxima, msmBucketPartials)
		assert.Equal(t, tc.s0, s0, tc.name)
		assert.Equal(t, tc.s1, s1, tc.name)
		assert.Equal(t, tc.maxLen, maxLen, tc.name)
	}
	// Folded (a chunk's buckets, read by bucket_fold): buckets of up to
	// msmFoldPartials partials stay out of the levels.
	for _, tc := range []struct {
		name           string
		maxima         []uint32
		s0, s1, maxLen uint32
	}{
		{"three to eight tasks everywhere", maxima(map[uint32]uint32{3: 129, 9: 512, uint32(top): 8 * 64}), p.nseg, p.nseg, 0},
		{"nine tasks in one band", maxima(map[uint32]uint32{3: 300, 9: 513}), 9 * 512, 10 * 512, 9},
		{"the bits' bucket and the top window", maxima(map[uint32]uint32{0: 1 << 19, 5: 400, uint32(top): 1100}),
			0, 15<<15 + 512, 8192},
		{"no long bucket", maxima(nil), p.nseg, p.nseg, 0},
	} {
		s0, s1, maxLen := p.reducedRange(tc.maxima, msmFoldPartials)
		assert.Equal(t, tc.s0, s0, "folded: "+tc.name)
		assert.Equal(t, tc.s1, s1, "folded: "+tc.name)
		assert.Equal(t, tc.maxLen, maxLen, "folded: "+tc.name)
	}
	small, err := newMSMPlanWindow(100, 4, 300) // nb = 8: a band per bucket
	require.NoError(t, err)
	require.Equal(t, uint32(1), small.band)
}

// taskBound is the grid of a reduce level that no longer reads its task
// count back: it must never be below the count the device computes
// (Σ ceil(len/t)), whatever the segments' lengths, and it is exact for the
// window levels' equal segments.
func TestTaskBound(t *testing.T) {
	rng := newTestRand(testseed.Seed(t))
	count := func(lens []uint32, tsize uint32) (n uint64) {
		for _, l := range lens {
			n += uint64(ceilDiv32(l, tsize))
		}
		return n
	}
	for range 2000 {
		nseg := 1 + rng.IntN(300)
		tsize := uint32(1 + rng.IntN(40))
		maxLen := uint32(rng.IntN(5000))
		lens := make([]uint32, nseg)
		var pts uint64
		for s := range lens {
			switch rng.IntN(4) {
			case 0: // empty
			case 1:
				lens[s] = maxLen // as long as allowed
			default:
				lens[s] = uint32(rng.IntN(int(maxLen) + 1))
			}
			pts += uint64(lens[s])
		}
		// The caller's points are a bound too: up to the whole buffer.
		slack := uint64(rng.IntN(1000))
		got := taskBound(pts+slack, uint32(nseg), maxLen, tsize)
		require.GreaterOrEqual(t, got, count(lens, tsize), "nseg %d, t %d, longest %d, %d points", nseg, tsize, maxLen, pts)
	}
	for _, tc := range []struct{ mwin, k, t uint32 }{{1, 1, 8}, {16, 300, 8}, {13, 3168, 8}, {2, 9, 32}} {
		equal := make([]uint32, tc.mwin)
		for w := range equal {
			equal[w] = tc.k
		}
		assert.Equal(t, count(equal, tc.t), taskBound(uint64(tc.mwin)*uint64(tc.k), tc.mwin, tc.k, tc.t),
			"window levels %+v", tc)
	}
}

func TestScanScratchCoversRecursion(t *testing.T) {
	// Mirrors msmRun.scan: sums (ceil(m/64)), offsets (+1), then recursion.
	var used func(m uint32) uint64
	used = func(m uint32) uint64 {
		nch := ceilDiv32(m, msmScanChunk)
		if nch == 1 {
			return 1
		}
		return uint64(2*nch+1) + used(nch)
	}
	for _, m := range []uint32{1, 2, 64, 65, 4096, 4097, 1 << 20, 13<<19 + 1} {
		assert.LessOrEqual(t, used(m), scanScratch(m), "m=%d", m)
	}
}

// toXYZZ writes p with extra random scaling: (X·λ², Y·λ³, λ², λ³) from an
// affine point, so jac must undo arbitrary ZZ, ZZZ.
func toXYZZ(p *bls12381.G1Affine) g1XYZZ {
	var l fp.Element
	l.SetRandom()
	var r g1XYZZ
	r.ZZ.Square(&l)
	r.ZZZ.Mul(&r.ZZ, &l)
	r.X.Mul(&p.X, &r.ZZ)
	r.Y.Mul(&p.Y, &r.ZZZ)
	return r
}

func TestCombineMatchesHorner(t *testing.T) {
	rng := newTestRand(testseed.Seed(t))
	const c, nwin = 7, 5
	pts := randG1(nwin, nwin, rng)
	wins := make([]g1XYZZ, nwin)
	var want bls12381.G1Jac
	for w := range wins {
		wins[w] = toXYZZ(&pts[w])
		var term bls12381.G1Jac
		term.FromAffine(&pts[w])
		term.ScalarMultiplication(&term, new(big.Int).Lsh(big.NewInt(1), uint(c*w)))
		want.AddAssign(&term)
	}
	wins[2] = g1XYZZ{} // infinity
	var w2 bls12381.G1Jac
	w2.FromAffine(&pts[2])
	w2.ScalarMultiplication(&w2, new(big.Int).Lsh(big.NewInt(1), 2*c))
	want.SubAssign(&w2)
	got := combineG1(wins, c)
	assert.True(t, got.Equal(&want))
}

var sharedMSM = sync.OnceValues(func() (*MSM, error) {
	dev, err := sharedDevice()
	if err != nil {
		return nil, err
	}
	return NewMSM(dev, nil)
})

// testMSM returns an MSM engine on GPU 0, skipping visibly without a GPU.
func testMSM(t testing.TB) *MSM {
	t.Helper()
	testDevice(t)
	m, err := sharedMSM()
	require.NoError(t, err)
	return m
}

// msmSizes are 1, 2, 3 and 2^k − 1, 2^k, 2^k + 1 for the given k.
func msmSizes(ks ...int) []int {
	s := []int{1, 2, 3}
	for _, k := range ks {
		s = append(s, 1<<k-1, 1<<k, 1<<k+1)
	}
	return s
}

func msmTestKs() []int {
	if testing.Short() {
		return []int{2, 5, 8, 11}
	}
	return []int{2, 5, 8, 11, 13, 16}
}

func TestMSMG1MatchesGnark(t *testing.T) {
	m := testMSM(t)
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	for _, n := range msmSizes(msmTestKs()...) {
		bases, scalars := randG1(n, n, rng), randScalars(n, rng)
		requireG1(t, m, bases, scalars, fmt.Sprintf("n=%d", n))
	}
}

func TestMSMG2MatchesGnark(t *testing.T) {
	m := testMSM(t)
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	for _, n := range msmSizes(msmTestKs()[:len(msmTestKs())-1]...) {
		bases, scalars := randG2(n, n, rng), randScalars(n, rng)
		requireG2(t, m, bases, scalars, fmt.Sprintf("n=%d", n))
	}
}

// requireG1 checks m.G1 against gnark-crypto and returns the call's record.
func requireG1(t *testing.T, m *MSM, bases []bls12381.G1Affine, scalars []fr.Element, what string) MSMTimings {
	t.Helper()
	var log msmLog
	got, err := m.G1(log.context(), bases, scalars)
	require.NoError(t, err, what)
	var want bls12381.G1Jac
	_, err = want.MultiExp(bases, scalars, ecc.MultiExpConfig{})
	require.NoError(t, err, what)
	require.True(t, got.Equal(&want), "%s: GPU G1 MSM differs from gnark-crypto", what)
	return log.last(t)
}

// requireG2 checks m.G2 against gnark-crypto and returns the call's record.
func requireG2(t *testing.T, m *MSM, bases []bls12381.G2Affine, scalars []fr.Element, what string) MSMTimings {
	t.Helper()
	var log msmLog
	got, err := m.G2(log.context(), bases, scalars)
	require.NoError(t, err, what)
	var want bls12381.G2Jac
	_, err = want.MultiExp(bases, scalars, ecc.MultiExpConfig{})
	require.NoError(t, err, what)
	require.True(t, got.Equal(&want), "%s: GPU G2 MSM differs from gnark-crypto", what)
	return log.last(t)
}

// edgeScalars builds scalars of one kind for n points.
func edgeScalars(kind string, n int, rng *rand.Rand) []fr.Element {
	s := randScalars(n, rng)
	for i := range s {
		switch kind {
		case "zero":
			s[i].SetZero()
		case "one":
			s[i].SetOne()
		case "minus-one":
			s[i].SetOne()
			s[i].Neg(&s[i])
		case "small":
			s[i].SetUint64(uint64(i % 4))
		case "sparse":
			if i%7 != 0 {
				s[i].SetZero()
			}
		case "bits": // 9 in 10 random bits, as in a witness of bit-valued wires
			if i%10 != 0 {
				s[i].SetUint64(rng.Uint64() & 1)
			}
		}
	}
	return s
}

// edgeBases alters random bases: some at infinity, all equal, or P next to −P.
func edgeBases(kind string, b []bls12381.G1Affine) []bls12381.G1Affine {
	for i := range b {
		switch kind {
		case "infinity":
			if i%3 == 0 {
				b[i] = bls12381.G1Affine{}
			}
		case "repeated":
			b[i] = b[0]
		case "negated":
			if i%2 == 1 {
				b[i].Neg(&b[i-1])
			}
		}
	}
	return b
}

func TestMSMG1EdgeInputs(t *testing.T) {
	m := testMSM(t)
	seed := testseed.Seed(t)
	rng := newTestRand(seed)
	for _, sk := range []string{"random", "zero", "one", "minus-one", "small", "sparse", "bits"} {
		for _, bk := range []string{"random", "infinity", "repeated", "negated"} {
			for _, n := range []int{1, 2, 3, 1000, 5000} {
				bases := edgeBases(bk, randG1(n, n, rng))
				scalars := edgeScalars(sk, n, rng)
				requireG1(t, m, bases, scalars, fmt.Sprintf("scalars %s, bases %s, n=%d", sk, bk, n))
			}
		}
	}
}

func TestMSMG2EdgeInputs(t *testing.T) {
	m := testMSM(t)
	rng := newTestRand(testseed.Seed(t))
	for _, sk := range []string{"zero", "one", "minus-one", "small"} {
		for _, n := range []int{1, 3, 1000} {
			bases := randG2(n, n, rng)
			bases[n/2] = bls12381.G2Affine{}
			bases[n-1] = bases[0]
			requireG2(t, m, bases, edgeScalars(sk, n, rng), fmt.Sprintf("scalars %s, n=%d", sk, n))
		}
	}
}

// TestMSMBucketWave checks each curve's bucket_sum wave against the device:
// whole blocks on every multiprocessor, at most the 2048 threads one holds.
func TestMSMBucketWave(t *testing.T) {
	m := testMSM(t)
	sms := uint32(m.dev.Info().Multiprocessors)
	for _, cv := range []*msmCurve{m.st.g1, m.st.g2} {
		t.Logf("%s bucket_sum: %d threads at once (%d blocks of %d per SM)", cv.name, cv.bucketWave,
			cv.bucketWave/sms/msmCurveBlock, msmCurveBlock)
		assert.Zero(t, cv.bucketWave%(sms*msmCurveBlock), "%s: whole blocks on every SM", cv.name)
		assert.True(t, cv.bucketWave >= sms*msmCurveBlock && cv.bucketWave <= sms*2048,
			"%s: wave of %d threads on %d SMs", cv.name, cv.bucketWave, sms)
	}
}

func TestMSMResidentBases(t *testing.T) {
	m := testMSM(t)
	rng := newTestRand(testseed.Seed(t))
	const n = 3000
	bases := randG1(n, n, rng)
	for round := range 3 {
		requireG1(t, m, bases, randScalars(n, rng), fmt.Sprintf("round %d", round))
	}
	requireG1(t, m, bases[:n/2], randScalars(n/2, rng), "prefix of resident bases")
	other := randG1(n, n, rng)
	copy(bases, other) // same address, new contents: must not reuse the old upload
	requireG1(t, m, bases, randScalars(n, rng), "rewritten bases")
	require.NoError(t, m.EvictBases())
	requireG1(t, m, bases, randScalars(n, rng), "after evict")
}

func TestMSMRejectsBadInput(t *testing.T) {
	var m MSM // no device needed: input checks come first
	_, err := m.G1(context.Background(), make([]bls12381.G1Affine, 2), make([]fr.Element, 3))
	assert.ErrorIs(t, err, ErrMSMInput)
	_, err = m.G2(context.Background(), nil, nil)
	assert.ErrorIs(t, err, ErrMSMInput)
}

// TestFpKernelMatchesGnark checks the device Fp multiply, add, subtract,
// negate, square and mul_sub (msm_g1_fp_selftest) against gnark-crypto's fp on random
// and edge operands.
func TestFpKernelMatchesGnark(t *testing.T) {
	m := testMSM(t)
	a, b := fpSelftestInputs(4096)
	out := make([]fp.Element, 6*len(a))
	selftestOnDevice(t, m, m.st.g1.mod, "msm_g1_fp_selftest", len(a), driver.Bytes(a), driver.Bytes(b), driver.Bytes(out))
	requireFpSelftest(t, a, b, out)
}

// selftestOnDevice runs the field self-test kernel name of mod on n operand
// pairs (a, b) and fills out with its results.
func selftestOnDevice(t *testing.T, m *MSM, mod *driver.Module, name string, n int, a, b, out []byte) {
	t.Helper()
	err := m.dev.Do(func(c *driver.Ctx) error {
		f, err := c.Function(mod, name)
		if err != nil {
			return err
		}
		return deviceRoundTrip(c, f, uint32(n), a, b, out)
	})
	require.NoError(t, err)
}

// fpSelftestInputs returns n random operand pairs with edge cases first:
// zeros, one, a + b = 0, a − b = 0, p − 1, and operands with every limb's
// top bit set or clear (the squaring's doubled limbs).
func fpSelftestInputs(n int) (a, b []fp.Element) {
	a, b = make([]fp.Element, n), make([]fp.Element, n)
	for i := range a {
		a[i].SetRandom()
		b[i].SetRandom()
	}
	a[0].SetZero()
	b[1].SetZero()
	a[2].SetOne()
	b[3].Neg(&a[3]) // a + b = 0
	b[4] = a[4]     // a − b = 0
	a[5].SetOne()
	a[5].Neg(&a[5]) // p − 1
	b[5] = a[5]
	for i := 6; i < 12; i++ { // raw limbs 0x8000_0000…, 0xffff_ffff…, 0x7fff_ffff…, below p
		var w [6]uint64
		for j := range w {
			w[j] = [...]uint64{0x8000_0000_8000_0000, 0xffff_ffff_ffff_ffff, 0x7fff_ffff_7fff_ffff}[i%3]
		}
		w[5] = 0x1a01_11ea_397f_e699 >> (i / 3 % 2) // just below p's top word, or half of it
		a[i] = fp.Element(w)
	}
	return a, b
}

// requireFpSelftest checks the self-test kernel's six results per pair.
func requireFpSelftest(t *testing.T, a, b, out []fp.Element) {
	t.Helper()
	for i := range a {
		var mul, add, sub, neg, sq, ms fp.Element
		mul.Mul(&a[i], &b[i])
		add.Add(&a[i], &b[i])
		sub.Sub(&a[i], &b[i])
		neg.Neg(&a[i])
		sq.Square(&a[i])
		ms.Mul(&b[i], &add)
		ms.Sub(&mul, &ms)
		require.Equal(t, mul, out[6*i], "mul %d", i)
		require.Equal(t, add, out[6*i+1], "add %d", i)
		require.Equal(t, sub, out[6*i+2], "sub %d", i)
		require.Equal(t, neg, out[6*i+3], "neg %d", i)
		require.Equal(t, sq, out[6*i+4], "square %d", i)
		require.Equal(t, ms, out[6*i+5], "a·b − b·(a + b) %d", i)
	}
}

// TestFp2KernelMatchesGnark checks the device Fp2 arithmetic
// (msm_g2_fp2_selftest) against gnark-crypto's E2.
func TestFp2KernelMatchesGnark(t *testing.T) {
	m := testMSM(t)
	a, b := fp2SelftestInputs(2048)
	out := make([]bls12381.E2, 5*len(a))
	selftestOnDevice(t, m, m.st.g2.mod, "msm_g2_fp2_selftest", len(a), driver.Bytes(a), driver.Bytes(b), driver.Bytes(out))
	requireFp2Selftest(t, a, b, out)
}

// fp2SelftestInputs returns n random operand pairs with edge cases first:
// zero, one, a + b = 0, and coefficients at p − 1 or 0 in every mix, which
// put the lazily reduced product's a0b0 − a1b1 and (a0 + a1)(b0 + b1) at
// the ends of their ranges.
func fp2SelftestInputs(n int) (a, b []bls12381.E2) {
	a, b = make([]bls12381.E2, n), make([]bls12381.E2, n)
	for i := range a {
		a[i].SetRandom()
		b[i].SetRandom()
	}
	a[0].SetZero()
	b[1].SetOne()
	b[2].Neg(&a[2])
	var top fp.Element // p − 1
	top.SetOne()
	top.Neg(&top)
	for i := 3; i < 3+16; i++ { // the 16 mixes of p − 1 and 0 over a0, a1, b0, b1
		for k, c := range []*fp.Element{&a[i].A0, &a[i].A1, &b[i].A0, &b[i].A1} {
			if (i-3)>>k&1 == 1 {
				*c = top
			} else {
				c.SetZero()
			}
		}
	}
	a[19].A0.SetOne() // a0b0 = b0 < a1b1 = (p − 1)²
	a[19].A1, b[19].A1 = top, top
	a[20].A0.SetOne() // a0b0 = 1 < a1b1
	b[20].A0.SetOne()
	return a, b
}

// requireFp2Selftest checks the Fp2 self-test kernel's five results per
// pair.
func requireFp2Selftest(t *testing.T, a, b, out []bls12381.E2) {
	t.Helper()
	for i := range a {
		var mul, add, sub, neg, ms bls12381.E2
		mul.Mul(&a[i], &b[i])
		add.Add(&a[i], &b[i])
		sub.Sub(&a[i], &b[i])
		neg.Neg(&a[i])
		ms.Mul(&b[i], &add)
		ms.Sub(&mul, &ms)
		require.Equal(t, mul, out[5*i], "mul %d", i)
		require.Equal(t, add, out[5*i+1], "add %d", i)
		require.Equal(t, sub, out[5*i+2], "sub %d", i)
		require.Equal(t, neg, out[5*i+3], "neg %d", i)
		require.Equal(t, ms, out[5*i+4], "a·b − b·(a + b) %d", i)
	}
}

// deviceRoundTrip copies a and b to the device, runs f(a, b, n, out) and
// copies out back.
func deviceRoundTrip(c *driver.Ctx, f *driver.Function, n uint32, a, b, out []byte) error {
	pa, err := c.Alloc(len(a) + len(b) + len(out))
	if err != nil {
		return err
	}
	defer func() { _ = c.Free(pa) }() // test scratch: a free error changes nothing
	pb, po := pa.Add(len(a)), pa.Add(len(a)+len(b))
	if err := c.HtoD(pa, a); err != nil {
		return err
	}
	if err := c.HtoD(pb, b); err != nil {
		return err
	}
	if err := launch1D(c, f, uint64(n), msmSortBlock, pa, pb, n, po); err != nil {
		return err
	}
	return c.DtoH(out, po)
}

// G1G2 sorts once when the two plans' sortKeys agree: plain plans of the
// same size do, whatever the curve's bucket wave, and both curves' layouts
// of such plans place the scalars and every sort buffer at the same
// addresses, so the G2 MSM finds the G1 MSM's sort where it looks. A table
// on one curve's bases changes the key.
func TestMSMPairSharesSort(t *testing.T) {
	const base = driver.DevicePtr(1 << 40)
	for _, n := range []int{1, 3, 1023, 1<<16 + 1, 1 << 22, 130023424} {
		p1, err := newMSMPlan(n, 300*msmCurveBlock)
		require.NoError(t, err)
		p2, err := newMSMPlan(n, 132*msmCurveBlock)
		require.NoError(t, err)
		require.Equal(t, p1.sortKey(), p2.sortKey(), "n = %d", n)
		b1, _ := p1.layout(base, 192)
		b2, _ := p2.layout(base, 384)
		sortBufs := func(b msmBufs) []driver.DevicePtr {
			return []driver.DevicePtr{b.scalars, b.digits, b.counts, b.segOff, b.cursor, b.sorted, b.maxv}
		}
		assert.Equal(t, sortBufs(b1), sortBufs(b2), "n = %d", n)
		assert.Equal(t, base, b1.scalars, "the scalars open the arena")
	}
	const n = 1 << 16
	tab, err := newMSMTable(n, 4, 0)
	require.NoError(t, err)
	pt, err := newMSMPlanTable(n, tab, 0, 300*msmCurveBlock)
	require.NoError(t, err)
	plain, err := newMSMPlan(n, 300*msmCurveBlock)
	require.NoError(t, err)
	assert.NotEqual(t, plain.sortKey(), pt.sortKey(), "a table folds the windows")
}
