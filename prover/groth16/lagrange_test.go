package groth16

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/require"
)

// refLagrangeAt is lagrangeAt written directly, one row at a time.
func refLagrangeAt(tau fr.Element, n, rows int) []fr.Element {
	omega, _ := fft.Generator(uint64(n))
	var scale, nInv, cur fr.Element
	one := fr.One()
	scale.Exp(tau, big.NewInt(int64(n))).Sub(&scale, &one)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	scale.Mul(&scale, &nInv)
	out := make([]fr.Element, rows)
	cur.SetOne()
	for i := range out {
		var d fr.Element
		d.Sub(&tau, &cur).Inverse(&d)
		out[i].Mul(&cur, &d).Mul(&out[i], &scale)
		cur.Mul(&cur, &omega)
	}
	return out
}

// TestLagrangeAt checks the chunked Lagrange basis against the direct one
// at awkward row counts, and that a τ in the domain is refused with the
// first row it hits.
func TestLagrangeAt(t *testing.T) {
	tau := randScalars(t, 1, testSeed(t))[0]
	for _, tc := range []struct{ n, rows int }{{2, 1}, {2, 2}, {16, 15}, {1024, 1023}, {4096, 4096}, {8192, 4097}} {
		got, err := lagrangeAt(tau, tc.n, tc.rows)
		require.NoError(t, err)
		require.Equal(t, refLagrangeAt(tau, tc.n, tc.rows), got, "n=%d rows=%d", tc.n, tc.rows)
	}
	omega, err := fft.Generator(1024)
	require.NoError(t, err)
	var inDomain fr.Element
	inDomain.Exp(omega, big.NewInt(700))
	_, err = lagrangeAt(inDomain, 1024, 1000)
	require.ErrorContains(t, err, "row 700")
	_, err = lagrangeAt(inDomain, 1024, 700)
	require.NoError(t, err, "row 700 is past the rows used")
}
