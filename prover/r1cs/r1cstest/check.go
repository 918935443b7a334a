package r1cstest

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Witness returns the full assignment w = (Public…, Private…).
func Witness(a *r1cs.Assignment) []fr.Element {
	w := make([]fr.Element, 0, len(a.Public)+len(a.Private))
	return append(append(w, a.Public...), a.Private...)
}

// MatVec returns m·w, with coefficients from table, computed straight from
// the CSR matrix: the slow reference for proving mode's evaluation vectors.
func MatVec(m *r1cs.Matrix, table, w []fr.Element) []fr.Element {
	out := make([]fr.Element, m.Rows())
	for i := range out {
		cols, ids := m.Row(i)
		for k, col := range cols {
			var t fr.Element
			t.Mul(&table[ids[k]], &w[col])
			out[i].Add(&out[i], &t)
		}
	}
	return out
}

// CheckAgainstMatrices verifies that a's evaluation vectors equal the
// matrices of sys applied to a's assignment, row by row, and that the padding
// beyond the rows is zero.
func CheckAgainstMatrices(sys *r1cs.System, a *r1cs.Assignment) error {
	w := Witness(a)
	if len(w) != sys.NbVariables() {
		return fmt.Errorf("assignment has %d variables, system %d", len(w), sys.NbVariables())
	}
	n := sys.DomainSize()
	for name, pair := range map[string]struct {
		m   *r1cs.Matrix
		got []fr.Element
	}{"A": {&sys.A, a.A}, "B": {&sys.B, a.B}, "C": {&sys.C, a.C}} {
		if len(pair.got) != n {
			return fmt.Errorf("%s: length %d, want domain size %d", name, len(pair.got), n)
		}
		want := MatVec(pair.m, sys.Coeffs, w)
		for i := range pair.got {
			var exp fr.Element
			if i < len(want) {
				exp = want[i]
			}
			if !pair.got[i].Equal(&exp) {
				return fmt.Errorf("%s row %d: solver %s, matrix %s", name, i, pair.got[i].String(), exp.String())
			}
		}
	}
	return nil
}
