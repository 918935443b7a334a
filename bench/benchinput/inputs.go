package benchinput

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/internal/stats"
)

// DefaultTile is the number of distinct random points tiled into large bases.
const DefaultTile = 1 << 16

// frTopLimb is the most significant 64-bit limb of r.
var frTopLimb = new(big.Int).Rsh(fr.Modulus(), 192).Uint64()

// ParallelFor runs f over [0, n) in contiguous chunks, one per CPU.
func ParallelFor(n int, f func(worker, lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	chunk := max(1, (n+workers-1)/workers)
	var wg sync.WaitGroup
	for w, lo := 0, 0; lo < n; w, lo = w+1, lo+chunk {
		wg.Go(func() { f(w, lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// RandomScalars returns n field elements, uniform up to a 2^-64 bias: four
// random limbs with the top one below r's top limb, a value below r and so a
// valid Montgomery representative. Deterministic in (seed, n).
func RandomScalars(n int, seed uint64) []fr.Element {
	v := make([]fr.Element, n)
	FillRandom(v, seed)
	return v
}

// FillRandom writes RandomScalars(len(v), seed) into v.
func FillRandom(v []fr.Element, seed uint64) {
	ParallelFor(len(v), func(w, lo, hi int) {
		r := rand.New(rand.NewPCG(seed, uint64(w)<<32|uint64(lo)))
		for i := lo; i < hi; i++ {
			v[i] = fr.Element{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64N(frTopLimb)}
		}
	})
}

// SetBits replaces a fraction frac of v, chosen at random, by random bits
// (0 or 1, as field elements). Deterministic in (seed, len(v)).
func SetBits(v []fr.Element, frac float64, seed uint64) {
	if frac <= 0 {
		return
	}
	one := fr.One()
	ParallelFor(len(v), func(w, lo, hi int) {
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

// RandomG1 returns n random points of G1 (the generator times random scalars).
func RandomG1(n int, seed uint64) []bls12381.G1Affine {
	_, _, g1, _ := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG1(&g1, RandomScalars(n, seed))
}

// RandomG2 returns n random points of G2.
func RandomG2(n int, seed uint64) []bls12381.G2Affine {
	_, _, _, g2 := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG2(&g2, RandomScalars(n, seed))
}

// Tiled returns n elements: tile repeated.
func Tiled[T any](tile []T, n int) []T {
	out := make([]T, n)
	ParallelFor(n, func(_, lo, hi int) {
		for i := lo; i < hi; {
			i += copy(out[i:hi], tile[i%len(tile):])
		}
	})
	return out
}

// FoldScalars returns f with f[j] = Σ_{i ≡ j mod period} s[i]. For bases
// tiled with that period, Σ s[i]·P[i] = Σ f[j]·tile[j]: a large MSM equals
// an MSM of period points, which gnark-crypto computes in milliseconds, so
// the check is exact and cheap.
func FoldScalars(s []fr.Element, period int) []fr.Element {
	out := make([]fr.Element, period)
	foldInto(out, s, 0)
	return out
}

// foldInto adds s[i] into out[(offset+i) mod len(out)]: the fold of a part
// of a longer scalar vector that starts at offset.
func foldInto(out, s []fr.Element, offset int) {
	period := len(out)
	var mu sync.Mutex
	ParallelFor(len(s), func(_, lo, hi int) {
		acc := make([]fr.Element, period)
		for i := lo; i < hi; i++ {
			j := (offset + i) % period
			acc[j].Add(&acc[j], &s[i])
		}
		mu.Lock()
		defer mu.Unlock()
		for j := range out {
			out[j].Add(&out[j], &acc[j])
		}
	})
}

// RefG1Parts computes Σ s[i]·P[i] with gnark-crypto where P is tile
// repeated and s the concatenation of parts, folding each part at its
// offset (no concatenated copy: at 2^27 it would take gigabytes).
func RefG1Parts(tile []bls12381.G1Affine, parts ...[]fr.Element) (bls12381.G1Jac, string, error) {
	var p bls12381.G1Jac
	f := make([]fr.Element, len(tile))
	off := 0
	for _, s := range parts {
		foldInto(f, s, off)
		off += len(s)
	}
	if _, err := p.MultiExp(tile, f, ecc.MultiExpConfig{}); err != nil {
		return p, "", fmt.Errorf("reference msm g1: %w", err)
	}
	return p, fmt.Sprintf("gnark MultiExp, folded to %s", stats.FormatCount(len(tile))), nil
}

// RefG1 computes Σ scalars[i]·bases[i] with gnark-crypto, where bases is
// tile repeated (or a prefix of it): directly when direct or when bases is
// no longer than tile, else through FoldScalars. It names the method used.
func RefG1(tile, bases []bls12381.G1Affine, scalars []fr.Element, direct bool) (bls12381.G1Jac, string, error) {
	var p bls12381.G1Jac
	s, how := scalars, "gnark MultiExp"
	if len(bases) > len(tile) && !direct {
		bases, s, how = tile, FoldScalars(scalars, len(tile)), fmt.Sprintf("gnark MultiExp, folded to %s", stats.FormatCount(len(tile)))
	}
	if _, err := p.MultiExp(bases, s, ecc.MultiExpConfig{}); err != nil {
		return p, how, fmt.Errorf("reference msm g1: %w", err)
	}
	return p, how, nil
}

// RefG2 is RefG1 in G2.
func RefG2(tile, bases []bls12381.G2Affine, scalars []fr.Element, direct bool) (bls12381.G2Jac, string, error) {
	var p bls12381.G2Jac
	s, how := scalars, "gnark MultiExp"
	if len(bases) > len(tile) && !direct {
		bases, s, how = tile, FoldScalars(scalars, len(tile)), fmt.Sprintf("gnark MultiExp, folded to %s", stats.FormatCount(len(tile)))
	}
	if _, err := p.MultiExp(bases, s, ecc.MultiExpConfig{}); err != nil {
		return p, how, fmt.Errorf("reference msm g2: %w", err)
	}
	return p, how, nil
}

// WireShare counts a witness's wire values by what they cost an MSM: zero
// (no digit), one (a single digit) and the rest (a digit in most windows).
type WireShare struct{ Zero, One, Other int }

// CountWires counts the values of the wire vectors on all cores.
func CountWires(vs ...[]fr.Element) WireShare {
	var total WireShare
	var mu sync.Mutex
	for _, v := range vs {
		ParallelFor(len(v), func(_, lo, hi int) {
			var c WireShare
			for i := lo; i < hi; i++ {
				switch {
				case v[i].IsZero():
					c.Zero++
				case v[i].IsOne():
					c.One++
				default:
					c.Other++
				}
			}
			mu.Lock()
			total.Zero, total.One, total.Other = total.Zero+c.Zero, total.One+c.One, total.Other+c.Other
			mu.Unlock()
		})
	}
	return total
}

// String writes the counts as shares of the wires.
func (s WireShare) String() string {
	n := s.Zero + s.One + s.Other
	pct := func(k int) float64 { return 100 * float64(k) / float64(max(n, 1)) }
	return fmt.Sprintf("witness: %d wires: %.1f %% zero, %.1f %% one, %.1f %% other values (bits: %.1f %%)",
		n, pct(s.Zero), pct(s.One), pct(s.Other), pct(s.Zero+s.One))
}
