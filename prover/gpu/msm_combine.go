package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// g1XYZZ and g2XYZZ mirror cuzk::ec::XYZZ<Fp> and XYZZ<Fp2>
// (cuda/include/cuzk/ec_xyzz.cuh): (X, Y, ZZ, ZZZ) for the affine point
// (X/ZZ, Y/ZZZ), ZZ = 0 for infinity, coordinates in gnark's Montgomery
// layout, so device results read straight into them.
type g1XYZZ struct{ X, Y, ZZ, ZZZ fp.Element }

type g2XYZZ struct{ X, Y, ZZ, ZZZ bls12381.E2 }

// g1Infinity and g2Infinity return the point at infinity in gnark-crypto's
// Jacobian coordinates, (1:1:0): the empty sum.
func g1Infinity() bls12381.G1Jac {
	var r bls12381.G1Jac
	r.X.SetOne()
	r.Y.SetOne()
	return r
}

func g2Infinity() bls12381.G2Jac {
	var r bls12381.G2Jac
	r.X.SetOne()
	r.Y.SetOne()
	return r
}

// jac returns p in Jacobian coordinates: X·ZZ², Y·ZZZ², Z = ZZZ, which
// stands for (X·ZZ²/ZZZ², Y·ZZZ²/ZZZ³) = (X/ZZ, Y/ZZZ) since ZZ³ = ZZZ²
// (gnark-crypto's fromJacExtended does the same).
func (p *g1XYZZ) jac() bls12381.G1Jac {
	if p.ZZ.IsZero() {
		return g1Infinity()
	}
	var r bls12381.G1Jac
	r.X.Square(&p.ZZ).Mul(&r.X, &p.X)
	r.Y.Square(&p.ZZZ).Mul(&r.Y, &p.Y)
	r.Z.Set(&p.ZZZ)
	return r
}

func (p *g2XYZZ) jac() bls12381.G2Jac {
	if p.ZZ.IsZero() {
		return g2Infinity()
	}
	var r bls12381.G2Jac
	r.X.Square(&p.ZZ).Mul(&r.X, &p.X)
	r.Y.Square(&p.ZZZ).Mul(&r.Y, &p.Y)
	r.Z.Set(&p.ZZZ)
	return r
}

// combineG1 returns Σ_w 2^(c·w)·W_w by Horner's rule from the top window.
func combineG1(wins []g1XYZZ, c uint32) bls12381.G1Jac {
	acc := g1Infinity()
	for w := len(wins) - 1; w >= 0; w-- {
		for range c {
			acc.DoubleAssign()
		}
		j := wins[w].jac()
		acc.AddAssign(&j)
	}
	return acc
}

// combineG2 is combineG1 over G2.
func combineG2(wins []g2XYZZ, c uint32) bls12381.G2Jac {
	acc := g2Infinity()
	for w := len(wins) - 1; w >= 0; w-- {
		for range c {
			acc.DoubleAssign()
		}
		j := wins[w].jac()
		acc.AddAssign(&j)
	}
	return acc
}
