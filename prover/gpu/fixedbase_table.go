package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/parallel"
)

// Tables of one base's multiples for the fixed-base kernels
// (cuda/include/cuzk/fixed_base.cuh): T[w·2^(c−1) + d − 1] = d·2^(c·w)·G for
// w < fixedBaseWindows(c) and 1 ≤ d ≤ 2^(c−1), affine, built on the host with
// gnark-crypto and uploaded once per call.

const (
	// fixedBaseMinWindow and fixedBaseMaxWindow bound the digit width c. At
	// c = 16 a table holds 16·2^15 points (48 MiB in G1, 96 MiB in G2) and a
	// scalar takes 16 additions; c = 17 would save one in sixteen for a
	// table twice that size, built on the host.
	fixedBaseMinWindow, fixedBaseMaxWindow = 2, 16
	// fixedBaseTableCost is what one host addition of the table build costs
	// in device additions, for the window choice: the GPU adds on the order
	// of a hundred times faster than the host's cores together.
	fixedBaseTableCost = 64
)

// fixedBaseWindows is the number of base-2^c digits of a scalar: nwin·c ≥
// 256, so a scalar below r < 2^255 plus the last carry still fits.
func fixedBaseWindows(c int) int { return (256 + c - 1) / c }

// fixedBaseWindow returns the digit width c for n scalars: the one that
// minimises the table's build (fixedBaseTableCost per host addition,
// nwin·2^(c−1) of them) plus the device's nwin additions per scalar.
func fixedBaseWindow(n int) int {
	best, bestCost := fixedBaseMinWindow, -1
	for c := fixedBaseMinWindow; c <= fixedBaseMaxWindow; c++ {
		nwin := fixedBaseWindows(c)
		cost := fixedBaseTableCost*nwin<<(c-1) + nwin*n
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// fixedBaseTableG1 returns the table of base's multiples with c-bit windows.
func fixedBaseTableG1(base *bls12381.G1Affine, c int) []bls12381.G1Affine {
	return fixedBaseTable(base, c, (*bls12381.G1Jac).FromAffine, (*bls12381.G1Jac).AddMixed,
		(*bls12381.G1Jac).DoubleAssign, func(dst []bls12381.G1Affine, src []bls12381.G1Jac) {
			copy(dst, bls12381.BatchJacobianToAffineG1(src))
		})
}

// fixedBaseTableG2 is fixedBaseTableG1 in G2 (one inversion per point:
// gnark-crypto has no batch conversion in G2, and the table is small).
func fixedBaseTableG2(base *bls12381.G2Affine, c int) []bls12381.G2Affine {
	return fixedBaseTable(base, c, (*bls12381.G2Jac).FromAffine, (*bls12381.G2Jac).AddMixed,
		(*bls12381.G2Jac).DoubleAssign, func(dst []bls12381.G2Affine, src []bls12381.G2Jac) {
			for i := range src {
				dst[i].FromJacobian(&src[i])
			}
		})
}

// fixedBaseTable builds the table of base's multiples in Jacobian
// coordinates J and converts it to affine A with toAffine (which maps
// infinity to the zero value). Rows are built in parallel, each by repeated
// mixed addition of its first entry 2^(c·w)·base.
func fixedBaseTable[A, J any](base *A, c int, fromAffine func(*J, *A) *J, addMixed func(*J, *A) *J,
	double func(*J) *J, toAffine func(dst []A, src []J)) []A {
	nwin, half := fixedBaseWindows(c), 1<<(c-1)
	rowBase := make([]J, nwin)
	fromAffine(&rowBase[0], base)
	for w := 1; w < nwin; w++ {
		rowBase[w] = rowBase[w-1]
		for range c {
			double(&rowBase[w])
		}
	}
	first := make([]A, nwin)
	toAffine(first, rowBase)
	table := make([]A, nwin*half)
	parallel.Execute(nwin, func(start, end int) {
		row := make([]J, half)
		for w := start; w < end; w++ {
			fromAffine(&row[0], &first[w])
			for d := 1; d < half; d++ {
				row[d] = row[d-1]
				addMixed(&row[d], &first[w])
			}
			toAffine(table[w*half:(w+1)*half], row)
		}
	})
	return table
}
