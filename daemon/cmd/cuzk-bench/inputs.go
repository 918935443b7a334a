package main

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Large random inputs. Scalars come from seeded PCG streams, one per worker,
// so that 2^27 of them take a second, not minutes. Bases are a tile of
// distinct random points (random multiples of the generator, made by
// gnark-crypto) repeated to the size: an MSM's cost does not depend on which
// points repeat, only on bucket collisions, which random scalars keep rare.
// Tiling also makes every large MSM checkable: see foldScalars.

// defaultTile is the number of distinct random points tiled into large bases.
const defaultTile = 1 << 16

// frTopLimb is the most significant 64-bit limb of r.
var frTopLimb = new(big.Int).Rsh(fr.Modulus(), 192).Uint64()

// parallelFor runs f over [0, n) in contiguous chunks, one per CPU.
func parallelFor(n int, f func(worker, lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	chunk := max(1, (n+workers-1)/workers)
	var wg sync.WaitGroup
	for w, lo := 0, 0; lo < n; w, lo = w+1, lo+chunk {
		wg.Go(func() { f(w, lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// randomScalars returns n field elements, uniform up to a 2^-64 bias: four
// random limbs with the top one below r's top limb, a value below r and so a
// valid Montgomery representative. Deterministic in (seed, n).
func randomScalars(n int, seed uint64) []fr.Element {
	v := make([]fr.Element, n)
	fillRandom(v, seed)
	return v
}

// fillRandom writes randomScalars(len(v), seed) into v.
func fillRandom(v []fr.Element, seed uint64) {
	parallelFor(len(v), func(w, lo, hi int) {
		r := rand.New(rand.NewPCG(seed, uint64(w)<<32|uint64(lo)))
		for i := lo; i < hi; i++ {
			v[i] = fr.Element{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64N(frTopLimb)}
		}
	})
}

// setBits replaces a fraction frac of v, chosen at random, by random bits
// (0 or 1, as field elements). Deterministic in (seed, len(v)).
func setBits(v []fr.Element, frac float64, seed uint64) {
	if frac <= 0 {
		return
	}
	one := fr.One()
	parallelFor(len(v), func(w, lo, hi int) {
		r := rand.New(rand.NewPCG(seed, uint64(w)<<32|uint64(lo)))
		for i := lo; i < hi; i++ {
			if r.Float64() >= frac {
				continue
			}
			if r.Uint64()&1 == 0 {
				v[i].SetZero()
			} else {
				v[i] = one
			}
		}
	})
}

// randomG1 returns n random points of G1 (the generator times random scalars).
func randomG1(n int, seed uint64) []bls12381.G1Affine {
	_, _, g1, _ := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG1(&g1, randomScalars(n, seed))
}

// randomG2 returns n random points of G2.
func randomG2(n int, seed uint64) []bls12381.G2Affine {
	_, _, _, g2 := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG2(&g2, randomScalars(n, seed))
}

// tiled returns n elements: tile repeated.
func tiled[T any](tile []T, n int) []T {
	out := make([]T, n)
	parallelFor(n, func(_, lo, hi int) {
		for i := lo; i < hi; {
			i += copy(out[i:hi], tile[i%len(tile):])
		}
	})
	return out
}

// foldScalars returns f with f[j] = Σ_{i ≡ j mod period} s[i]. For bases
// tiled with that period, Σ s[i]·P[i] = Σ f[j]·tile[j]: a large MSM equals
// an MSM of period points, which gnark-crypto computes in milliseconds, so
// the check is exact and cheap.
func foldScalars(s []fr.Element, period int) []fr.Element {
	var mu sync.Mutex
	out := make([]fr.Element, period)
	parallelFor(len(s), func(_, lo, hi int) {
		acc := make([]fr.Element, period)
		for i := lo; i < hi; i++ {
			acc[i%period].Add(&acc[i%period], &s[i])
		}
		mu.Lock()
		defer mu.Unlock()
		for j := range out {
			out[j].Add(&out[j], &acc[j])
		}
	})
	return out
}

// refG1 computes Σ scalars[i]·bases[i] with gnark-crypto, where bases is
// tile repeated (or a prefix of it): directly when direct or when bases is
// no longer than tile, else through foldScalars. It names the method used.
func refG1(tile, bases []bls12381.G1Affine, scalars []fr.Element, direct bool) (bls12381.G1Jac, string, error) {
	var p bls12381.G1Jac
	s, how := scalars, "gnark MultiExp"
	if len(bases) > len(tile) && !direct {
		bases, s, how = tile, foldScalars(scalars, len(tile)), fmt.Sprintf("gnark MultiExp, folded to %s", sizeString(len(tile)))
	}
	if _, err := p.MultiExp(bases, s, ecc.MultiExpConfig{}); err != nil {
		return p, how, fmt.Errorf("reference msm g1: %w", err)
	}
	return p, how, nil
}

// refG2 is refG1 in G2.
func refG2(tile, bases []bls12381.G2Affine, scalars []fr.Element, direct bool) (bls12381.G2Jac, string, error) {
	var p bls12381.G2Jac
	s, how := scalars, "gnark MultiExp"
	if len(bases) > len(tile) && !direct {
		bases, s, how = tile, foldScalars(scalars, len(tile)), fmt.Sprintf("gnark MultiExp, folded to %s", sizeString(len(tile)))
	}
	if _, err := p.MultiExp(bases, s, ecc.MultiExpConfig{}); err != nil {
		return p, how, fmt.Errorf("reference msm g2: %w", err)
	}
	return p, how, nil
}

// wireShare counts a witness's wire values by what they cost an MSM: zero
// (no digit), one (a single digit) and the rest (a digit in most windows).
type wireShare struct{ zero, one, other int }

// countWires counts the values of the wire vectors on all cores.
func countWires(vs ...[]fr.Element) wireShare {
	var total wireShare
	var mu sync.Mutex
	for _, v := range vs {
		parallelFor(len(v), func(_, lo, hi int) {
			var c wireShare
			for i := lo; i < hi; i++ {
				switch {
				case v[i].IsZero():
					c.zero++
				case v[i].IsOne():
					c.one++
				default:
					c.other++
				}
			}
			mu.Lock()
			total.zero, total.one, total.other = total.zero+c.zero, total.one+c.one, total.other+c.other
			mu.Unlock()
		})
	}
	return total
}

func (s wireShare) String() string {
	n := s.zero + s.one + s.other
	pct := func(k int) float64 { return 100 * float64(k) / float64(max(n, 1)) }
	return fmt.Sprintf("witness: %d wires: %.1f %% zero, %.1f %% one, %.1f %% other values (bits: %.1f %%)",
		n, pct(s.zero), pct(s.one), pct(s.other), pct(s.zero+s.one))
}
