package r1cs

// Density counts the columns of the assignment (One and the public inputs
// included) that appear in a term of at least one row of
// each matrix. A Groth16 proving key holds one G1 point per column of A and
// one G1 and one G2 point per column of B (the zero columns are dropped),
// so these counts size the key and its A and B multi-scalar
// multiplications. The public-input rows (input_k · 0 = 0) put every public
// column in A, as in bellman's key.
type Density struct {
	Columns int // NbVariables
	A, B, C int // columns present in each matrix
}

// Density returns the column densities of s. It reads the matrices, so s
// must come from Compile (not Counts).
func (s *System) Density() Density {
	d := Density{Columns: s.NbVariables()}
	seen := make([]uint8, d.Columns)
	for k, m := range [3]*Matrix{&s.A, &s.B, &s.C} {
		bit := uint8(1) << k
		for _, c := range m.Col {
			seen[c] |= bit
		}
	}
	for _, f := range seen {
		d.A += int(f & 1)
		d.B += int(f >> 1 & 1)
		d.C += int(f >> 2 & 1)
	}
	return d
}

// Share returns n as a fraction of the columns.
func (d Density) Share(n int) float64 {
	if d.Columns == 0 {
		return 0
	}
	return float64(n) / float64(d.Columns)
}

// KnownDensity returns s's column densities: from its matrices when it has
// them (a pass over the column indices of A, B and C), else the Columns a
// System in Counts form carries; ok is false when neither is there.
func (s *System) KnownDensity() (d Density, ok bool) {
	if s.A.RowPtr != nil {
		return s.Density(), true
	}
	if s.Columns != nil {
		return *s.Columns, true
	}
	return Density{}, false
}
