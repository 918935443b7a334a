package groth16

import bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

// Bases returns the point vectors Prove sums over, as the MSMs see them:
// in G1 A, B and L‖H as one vector when adjacent (keys from Setup and
// ReadFrom) or L and H apart; in G2 B. A GPU backend keeps exactly these
// slices resident, so they are what preloading and eviction name.
func (pk *ProvingKey) Bases() (g1 [][]bls12381.G1Affine, g2 [][]bls12381.G2Affine) {
	g1 = [][]bls12381.G1Affine{pk.G1.A, pk.G1.B}
	if lh, ok := pk.lhBases(); ok {
		g1 = append(g1, lh)
	} else {
		g1 = append(g1, pk.G1.L, pk.G1.H)
	}
	return g1, [][]bls12381.G2Affine{pk.G2.B}
}
