package groth16

import (
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// edgeScalars are 0, 1, r−1, 2^k and 2^k−1 for k at digit and word
// boundaries: they exercise every carry path of signedDigits.
func edgeScalars() []fr.Element {
	var rMinus1 fr.Element
	rMinus1.SetOne().Neg(&rMinus1)
	out := []fr.Element{{}, fr.One(), rMinus1}
	for _, k := range []uint{1, 11, 12, 13, 15, 16, 17, 63, 64, 127, 128, 240, 253, 254} {
		var p, m fr.Element
		p.SetBigInt(new(big.Int).Lsh(big.NewInt(1), k))
		m.Sub(&p, &out[1])
		out = append(out, p, m)
	}
	return out
}

// randScalars returns n scalars drawn from a ChaCha8 stream seeded with seed.
func randScalars(t testing.TB, n int, seed uint64) []fr.Element {
	var key [32]byte
	key[0], key[1], key[2], key[3] = byte(seed), byte(seed>>8), byte(seed>>16), byte(seed>>24)
	rnd := mrand.NewChaCha8(key)
	out := make([]fr.Element, n)
	for i := range out {
		var err error
		out[i], err = randomScalar(rnd)
		require.NoError(t, err)
	}
	return out
}

// testSeed is the seed of a test's random scalars (internal/testseed: logged,
// replayed by CUZK_TEST_SEED).
func testSeed(t *testing.T) uint64 {
	t.Helper()
	return testseed.Seed(t)
}

func TestFixedBaseMatchesGnark(t *testing.T) {
	seed := testSeed(t)
	_, _, g1, g2 := bls12381.Generators()
	cases := []struct {
		name    string
		scalars []fr.Element
	}{
		{"n=0", nil},
		{"n=1", randScalars(t, 1, seed)},
		{"n=2", randScalars(t, 2, seed+1)},
		{"n=3", randScalars(t, 3, seed+2)},
		{"n=1001", randScalars(t, 1001, seed+3)},
		{"edges", edgeScalars()},
		{"edges+random", append(edgeScalars(), randScalars(t, fixedBaseBatch+1, seed+4)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, bls12381.BatchScalarMultiplicationG1(&g1, tc.scalars), fixedBaseG1(&g1, tc.scalars), "G1")
			assert.Equal(t, bls12381.BatchScalarMultiplicationG2(&g2, tc.scalars), fixedBaseG2(&g2, tc.scalars), "G2")
		})
	}
}

func TestFixedBaseMatchesScalarMultiplication(t *testing.T) {
	scalars := append(edgeScalars(), randScalars(t, 5, testSeed(t))...)
	_, _, g1, g2 := bls12381.Generators()
	got1, got2 := fixedBaseG1(&g1, scalars), fixedBaseG2(&g2, scalars)
	require.Len(t, got1, len(scalars))
	require.Len(t, got2, len(scalars))
	for i := range scalars {
		s := scalars[i].BigInt(new(big.Int))
		var want1 bls12381.G1Affine
		var want2 bls12381.G2Affine
		want1.ScalarMultiplication(&g1, s)
		want2.ScalarMultiplication(&g2, s)
		assert.Equal(t, want1, got1[i], "G1 scalar %s", s)
		assert.Equal(t, want2, got2[i], "G2 scalar %s", s)
	}
	assert.True(t, got1[0].IsInfinity() && got2[0].IsInfinity(), "0·G is infinity")
	assert.Equal(t, g1, got1[1], "1·G1")
	assert.Equal(t, g2, got2[1], "1·G2")
}

func TestFixedBaseEveryWindow(t *testing.T) {
	scalars := append(edgeScalars(), randScalars(t, 50, testSeed(t))...)
	_, _, g1, _ := bls12381.Generators()
	want := bls12381.BatchScalarMultiplicationG1(&g1, scalars)
	for c := minWindow; c <= maxWindow; c++ {
		assert.Equal(t, want, fixedBase(&g1, scalars, c, g1ToAffine), "c=%d", c)
	}
}

func TestSignedDigits(t *testing.T) {
	scalars := append(edgeScalars(), randScalars(t, 100, testSeed(t))...)
	for c := minWindow; c <= maxWindow; c++ {
		digits := make([]int32, windows(c))
		half := int32(1) << (c - 1)
		for i := range scalars {
			signedDigits(&scalars[i], c, digits)
			sum := new(big.Int)
			for w := len(digits) - 1; w >= 0; w-- {
				d := digits[w]
				require.True(t, -half < d && d <= half, "c=%d digit %d = %d out of range", c, w, d)
				sum.Lsh(sum, uint(c)).Add(sum, big.NewInt(int64(d)))
			}
			want := scalars[i].BigInt(new(big.Int))
			assert.Zero(t, want.Cmp(sum), "c=%d scalar %d: digits give %s, want %s", c, i, sum, want)
		}
	}
}

func TestWindowFor(t *testing.T) {
	cases := []struct{ n, min, max int }{
		{0, minWindow, minWindow + 1},
		{1, minWindow, 4},
		{1 << 16, 12, 14},
		{1 << 26, maxWindow, maxWindow},
	}
	for _, tc := range cases {
		c := windowFor(tc.n)
		assert.True(t, tc.min <= c && c <= tc.max, "windowFor(%d) = %d, want %d…%d", tc.n, c, tc.min, tc.max)
	}
}

// BenchmarkFixedBase compares fixedBase with gnark-crypto's batch
// multiplication per group and size; points/s includes building the table.
func BenchmarkFixedBase(b *testing.B) {
	_, _, g1, g2 := bls12381.Generators()
	methods := []struct {
		name string
		run  func([]fr.Element)
	}{
		{"G1/fixedbase", func(s []fr.Element) { fixedBaseG1(&g1, s) }},
		{"G1/gnark", func(s []fr.Element) { bls12381.BatchScalarMultiplicationG1(&g1, s) }},
		{"G2/fixedbase", func(s []fr.Element) { fixedBaseG2(&g2, s) }},
		{"G2/gnark", func(s []fr.Element) { bls12381.BatchScalarMultiplicationG2(&g2, s) }},
	}
	for _, n := range []int{1 << 10, 1 << 14} {
		scalars := randScalars(b, n, 1)
		for _, m := range methods {
			b.Run(fmt.Sprintf("n=%d/%s", n, m.name), func(b *testing.B) {
				for b.Loop() {
					m.run(scalars)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
			})
		}
	}
}
