package gpu

import (
	"math/rand/v2"
	"sync"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Inputs of the MSM tests and benchmarks.

// randScalars returns n scalars below 2^254 < r from a fast seeded generator
// (crypto-grade randomness is not needed; fresh seeds per run are).
func randScalars(n int, rng *rand.Rand) []fr.Element {
	s := make([]fr.Element, n)
	fill := func(lo, hi int, seed uint64) {
		r := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < hi; i++ {
			for j := range s[i] {
				s[i][j] = r.Uint64()
			}
			s[i][3] &= 1<<62 - 1
		}
	}
	parallelRange(n, rng.Uint64(), fill)
	return s
}

// parallelRange runs fill over [0, n) in a few goroutines.
func parallelRange(n int, seed uint64, fill func(lo, hi int, seed uint64)) {
	const parts = 16
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Add(1)
		go func() { defer wg.Done(); fill(lo, hi, seed) }()
	}
	wg.Wait()
}

// randG1 returns n random G1 points: distinct random multiples of the
// generator, computed once for min(n, distinct) points and repeated
// (tiled) past that.
func randG1(n, distinct int, rng *rand.Rand) []bls12381.G1Affine {
	_, _, g, _ := bls12381.Generators()
	base := bls12381.BatchScalarMultiplicationG1(&g, randScalars(min(n, distinct), rng))
	return tile(base, n)
}

// randG2 is randG1 over G2.
func randG2(n, distinct int, rng *rand.Rand) []bls12381.G2Affine {
	_, _, _, g := bls12381.Generators()
	base := bls12381.BatchScalarMultiplicationG2(&g, randScalars(min(n, distinct), rng))
	return tile(base, n)
}

func tile[T any](base []T, n int) []T {
	out := make([]T, n)
	for i := 0; i < n; i += len(base) {
		copy(out[i:], base)
	}
	return out
}

// newTestRand returns a generator seeded from seed.
func newTestRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
