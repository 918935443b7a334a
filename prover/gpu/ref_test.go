package gpu

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/utils"
	"github.com/stretchr/testify/require"
)

// This file holds the CPU references every GPU result is compared with:
// gnark-crypto's fft on the same domain (fft.NewDomain), in natural order.

// refNTT returns the evaluations of the polynomial with coefficients a over
// the domain of size len(a) (on the coset g·H when coset).
func refNTT(a []fr.Element, coset bool) []fr.Element {
	out := append([]fr.Element(nil), a...)
	d := fft.NewDomain(uint64(len(a)))
	if coset {
		d.FFT(out, fft.DIF, fft.OnCoset())
	} else {
		d.FFT(out, fft.DIF)
	}
	utils.BitReverse(out)
	return out
}

// refINTT returns the coefficients of the polynomial with evaluations a over
// the domain of size len(a) (on the coset g·H when coset).
func refINTT(a []fr.Element, coset bool) []fr.Element {
	out := append([]fr.Element(nil), a...)
	d := fft.NewDomain(uint64(len(a)))
	if coset {
		d.FFTInverse(out, fft.DIF, fft.OnCoset())
	} else {
		d.FFTInverse(out, fft.DIF)
	}
	utils.BitReverse(out)
	return out
}

// refQuotientH computes h = (a·b − c)/Z as the Groth16 prover does on the
// CPU: interpolate a, b, c, evaluate them on the coset g·H, divide a·b − c by
// Z(gx) = g^n − 1 there and interpolate back; natural order.
func refQuotientH(a, b, c []fr.Element) []fr.Element {
	n := len(a)
	va := refINTT(a, false)
	vb := refINTT(b, false)
	vc := refINTT(c, false)
	va, vb, vc = refNTT(va, true), refNTT(vb, true), refNTT(vc, true)
	den := cosetVanishingInv(n)
	for i := range va {
		va[i].Mul(&va[i], &vb[i]).Sub(&va[i], &vc[i]).Mul(&va[i], &den)
	}
	return refINTT(va, true)
}

// cosetVanishingInv returns 1/Z(g·x) = 1/(g^n − 1) for x in the domain H.
func cosetVanishingInv(n int) fr.Element {
	g := fft.GeneratorFullMultiplicativeGroup()
	var den, one fr.Element
	one.SetOne()
	den.Exp(g, big.NewInt(int64(n)))
	den.Sub(&den, &one).Inverse(&den)
	return den
}

// inputKind names a kind of test vector.
type inputKind int

const (
	inputRandom inputKind = iota
	inputZero
	inputConstant
)

func (k inputKind) String() string {
	return [...]string{"random", "zero", "constant"}[k]
}

// newVector returns a fresh vector of n elements of the given kind.
func newVector(t testing.TB, n int, kind inputKind) []fr.Element {
	v := make([]fr.Element, n)
	switch kind {
	case inputRandom:
		for i := range v {
			_, err := v[i].SetRandom()
			require.NoError(t, err)
		}
	case inputConstant:
		var c fr.Element
		_, err := c.SetRandom()
		require.NoError(t, err)
		for i := range v {
			v[i] = c
		}
	}
	return v
}
