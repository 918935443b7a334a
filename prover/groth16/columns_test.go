package groth16

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// refColumnSums is columnSums in one pass over the rows.
func refColumnSums(m *r1cs.Matrix, table, lag []fr.Element, nbVars int) []fr.Element {
	out := make([]fr.Element, nbVars)
	var t fr.Element
	for i := 0; i < m.Rows(); i++ {
		cols, ids := m.Row(i)
		for k, col := range cols {
			t.Mul(&table[ids[k]], &lag[i])
			out[col].Add(&out[col], &t)
		}
	}
	return out
}

// TestColumnSums checks the banded column sums against one pass over the
// rows, on porep-synth's three matrices with random Lagrange values.
func TestColumnSums(t *testing.T) {
	c, err := porep.New(1<<12, 2)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	lag := randScalars(t, sys.NbRows(), testSeed(t))
	for name, m := range map[string]*r1cs.Matrix{"A": &sys.A, "B": &sys.B, "C": &sys.C} {
		require.Equal(t, refColumnSums(m, sys.Coeffs, lag, sys.NbVariables()),
			columnSums(m, sys.Coeffs, lag, sys.NbVariables()), name)
	}
}
