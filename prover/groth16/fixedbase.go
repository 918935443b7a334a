package groth16

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/parallel"
)

// Fixed-base multiplication for the development setup: every key point is
// s·G for one of the two generators, so a table of the multiples
// d·2^(c·w)·G turns each product into ⌈256/c⌉ mixed additions and no
// doublings (gnark-crypto's BatchScalarMultiplication does ~255 doublings
// per scalar).

const (
	// minWindow and maxWindow bound the digit width c. At c = 16 the
	// tables hold 2^19 points (48 MiB in G1, 96 MiB in G2) and take about a
	// second to build on two cores; wider ones would save one addition in
	// sixteen per scalar for twice that.
	minWindow, maxWindow = 2, 16
	// fixedBaseBatch is how many Jacobian results a worker holds before it
	// converts them to affine with one inversion; it bounds the
	// intermediate memory to fixedBaseBatch points per core.
	fixedBaseBatch = 1024
)

// affinePoint is what fixedBase needs of G1Affine or G2Affine.
type affinePoint[A any] interface {
	*A
	Neg(a *A) *A
}

// jacobianPoint is what fixedBase needs of G1Jac or G2Jac; the zero value
// must be the point at infinity (Z = 0), as it is for both.
type jacobianPoint[J, A any] interface {
	*J
	FromAffine(a *A) *J
	AddMixed(a *A) *J
	DoubleAssign() *J
}

// fixedBaseG1 returns s·base for every s in scalars, equal to
// bls12381.BatchScalarMultiplicationG1(base, scalars) (infinity is (0,0)).
// It uses all cores and only reads scalars; calls share no state, so they
// are safe to run concurrently.
func fixedBaseG1(base *bls12381.G1Affine, scalars []fr.Element) []bls12381.G1Affine {
	return fixedBase(base, scalars, windowFor(len(scalars)), g1ToAffine)
}

// fixedBaseG2 is fixedBaseG1 in G2.
func fixedBaseG2(base *bls12381.G2Affine, scalars []fr.Element) []bls12381.G2Affine {
	return fixedBase(base, scalars, windowFor(len(scalars)), g2ToAffine)
}

// windowFor returns the digit width c that minimises the number of
// additions, nwin·2^(c−1) to build the table plus nwin per scalar.
func windowFor(n int) int {
	best, bestCost := minWindow, -1
	for c := minWindow; c <= maxWindow; c++ {
		nwin := windows(c)
		cost := nwin<<(c-1) + nwin*n
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// windows is the number of base-2^c digits of a scalar: nwin·c ≥ 256, so a
// scalar below r < 2^255 plus the last carry still fits.
func windows(c int) int { return (256 + c - 1) / c }

// fixedBase returns s·base for every s in scalars with digit width c,
// converting batches of Jacobian results with toAffine(dst, src), which
// must map Z = 0 to the zero affine value.
func fixedBase[A, J any, PA affinePoint[A], PJ jacobianPoint[J, A]](
	base *A, scalars []fr.Element, c int, toAffine func(dst []A, src []J),
) []A {
	out := make([]A, len(scalars))
	if len(scalars) == 0 {
		return out
	}
	table := fixedBaseTable[A, J, PJ](base, c, toAffine)
	parallel.Execute(len(scalars), func(start, end int) {
		buf := make([]J, min(fixedBaseBatch, end-start))
		digits := make([]int32, windows(c)*len(buf))
		for lo := start; lo < end; lo += len(buf) {
			batch := buf[:min(len(buf), end-lo)]
			sumDigits[A, J, PA, PJ](batch, scalars[lo:lo+len(batch)], table, c, digits)
			toAffine(out[lo:lo+len(batch)], batch)
		}
	})
	return out
}

// sumDigits sets acc[i] = scalars[i]·base from the table of base, using
// digits (len ≥ windows(c)·len(acc)) as scratch. It goes window by window
// so that one table row, not the whole table, is hot in the cache; that
// is what lets c reach 16 (docs/perf.md).
func sumDigits[A, J any, PA affinePoint[A], PJ jacobianPoint[J, A]](
	acc []J, scalars []fr.Element, table []A, c int, digits []int32,
) {
	nwin, half := windows(c), 1<<(c-1)
	var inf J
	for i := range acc {
		acc[i] = inf
		signedDigits(&scalars[i], c, digits[i*nwin:(i+1)*nwin])
	}
	for w := range nwin {
		row := table[w*half : (w+1)*half]
		for i := range acc {
			switch d := digits[i*nwin+w]; {
			case d > 0:
				PJ(&acc[i]).AddMixed(&row[d-1])
			case d < 0:
				var neg A
				PA(&neg).Neg(&row[-d-1])
				PJ(&acc[i]).AddMixed(&neg)
			}
		}
	}
}

// FixedBaseTableG1 returns the table of base's multiples that the
// fixed-base multiplication with c-bit signed digits reads (layout at
// fixedBaseTable): the CPU path builds it for itself, and a GPU backend
// uploads it. Safe for concurrent use.
func FixedBaseTableG1(base *bls12381.G1Affine, c int) []bls12381.G1Affine {
	return fixedBaseTable[bls12381.G1Affine, bls12381.G1Jac](base, c, g1ToAffine)
}

// FixedBaseTableG2 is FixedBaseTableG1 in G2.
func FixedBaseTableG2(base *bls12381.G2Affine, c int) []bls12381.G2Affine {
	return fixedBaseTable[bls12381.G2Affine, bls12381.G2Jac](base, c, g2ToAffine)
}

// fixedBaseTable returns T[w·2^(c−1) + d−1] = d·2^(c·w)·base for
// w < windows(c) and 1 ≤ d ≤ 2^(c−1), in affine coordinates. Rows are
// built in parallel, each by repeated mixed addition of its first entry.
func fixedBaseTable[A, J any, PJ jacobianPoint[J, A]](base *A, c int, toAffine func(dst []A, src []J)) []A {
	nwin, half := windows(c), 1<<(c-1)
	rowBase := make([]J, nwin) // 2^(c·w)·base
	PJ(&rowBase[0]).FromAffine(base)
	for w := 1; w < nwin; w++ {
		rowBase[w] = rowBase[w-1]
		for range c {
			PJ(&rowBase[w]).DoubleAssign()
		}
	}
	first := make([]A, nwin)
	toAffine(first, rowBase)
	table := make([]A, nwin*half)
	parallel.Execute(nwin, func(start, end int) {
		row := make([]J, half)
		for w := start; w < end; w++ {
			PJ(&row[0]).FromAffine(&first[w])
			for d := 1; d < half; d++ {
				row[d] = row[d-1]
				PJ(&row[d]).AddMixed(&first[w])
			}
			toAffine(table[w*half:(w+1)*half], row)
		}
	})
	return table
}

// signedDigits writes s (as an integer, out of Montgomery form) to digits
// in signed base 2^c, least significant first: s = Σ digits[w]·2^(c·w)
// with −2^(c−1) < digits[w] ≤ 2^(c−1). len(digits) must be windows(c).
func signedDigits(s *fr.Element, c int, digits []int32) {
	bits := s.Bits()
	half, full := uint64(1)<<(c-1), uint64(1)<<c
	carry := uint64(0)
	for w := range digits {
		d := window(&bits, w*c, c) + carry
		carry = 0
		if d > half {
			digits[w] = int32(d) - int32(full)
			carry = 1
		} else {
			digits[w] = int32(d)
		}
	}
}

// window returns bits off … off+c−1 of the little-endian integer bits.
func window(bits *[4]uint64, off, c int) uint64 {
	i, sh := off/64, off%64
	if i >= len(bits) {
		return 0
	}
	v := bits[i] >> sh
	if sh+c > 64 && i+1 < len(bits) {
		v |= bits[i+1] << (64 - sh)
	}
	return v & (1<<c - 1)
}

// g1ToAffine converts src to dst with gnark-crypto's batch inversion.
func g1ToAffine(dst []bls12381.G1Affine, src []bls12381.G1Jac) {
	copy(dst, bls12381.BatchJacobianToAffineG1(src))
}

// g2ToAffine converts src to dst with one inversion (Montgomery's trick);
// gnark-crypto has no batch conversion in G2. Infinity becomes (0,0), as
// in G2Affine.FromJacobian.
func g2ToAffine(dst []bls12381.G2Affine, src []bls12381.G2Jac) {
	var acc bls12381.E2
	acc.SetOne()
	for i := range src { // dst[i].X holds the product of the Z before i
		if !src[i].Z.IsZero() {
			dst[i].X = acc
			acc.Mul(&acc, &src[i].Z)
		}
	}
	acc.Inverse(&acc)
	for i := len(src) - 1; i >= 0; i-- {
		if src[i].Z.IsZero() {
			dst[i] = bls12381.G2Affine{}
			continue
		}
		var zInv, zInv2 bls12381.E2
		zInv.Mul(&dst[i].X, &acc)
		acc.Mul(&acc, &src[i].Z)
		zInv2.Square(&zInv)
		dst[i].X.Mul(&src[i].X, &zInv2)
		dst[i].Y.Mul(&src[i].Y, &zInv2).Mul(&dst[i].Y, &zInv)
	}
}
