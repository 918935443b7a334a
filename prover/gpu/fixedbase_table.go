package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/prover/groth16"
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

// fixedBaseTableG1 returns the table of base's multiples with c-bit
// windows: the CPU path's own table (groth16.FixedBaseTableG1), whose
// layout the kernels read.
func fixedBaseTableG1(base *bls12381.G1Affine, c int) []bls12381.G1Affine {
	return groth16.FixedBaseTableG1(base, c)
}

// fixedBaseTableG2 is fixedBaseTableG1 in G2.
func fixedBaseTableG2(base *bls12381.G2Affine, c int) []bls12381.G2Affine {
	return groth16.FixedBaseTableG2(base, c)
}
