package poseidon

import "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

// rewrite returns the shortest form of l the builder knows: l over the
// unbound symbols, or l re-expressed through the window's bound inputs x_k
// and outputs y_k (see the top of tables.go). The rewritten form is checked
// symbol by symbol before it is used, so a failed rewrite only costs terms.
func (b *tableBuilder) rewrite(l *denseAffine) affine {
	direct := sparse(l)
	if len(b.window) < b.p.T {
		return direct
	}
	allowed := make(map[int]bool, len(b.window))
	for _, w := range b.window {
		allowed[w.y] = true
	}
	alpha, ok := solveLinear(b.windowSystem(l, allowed), len(b.window))
	if !ok {
		return direct
	}
	res := l.clone()
	var t fr.Element
	for k, w := range b.window {
		t.Mul(&alpha[k], &w.base.c)
		res.c.Sub(&res.c, &t)
		for s := range res.v {
			if !w.base.v[s].IsZero() {
				t.Mul(&alpha[k], &w.base.v[s])
				res.v[s].Sub(&res.v[s], &t)
			}
		}
	}
	form := affine{c: res.c}
	for s := range res.v {
		if !res.v[s].IsZero() && !allowed[s] {
			return direct // the window does not determine l
		}
	}
	for k, w := range b.window {
		if !alpha[k].IsZero() {
			form.terms = append(form.terms, symTerm{sym: w.x, coeff: alpha[k]})
		}
		if !res.v[w.y].IsZero() {
			form.terms = append(form.terms, symTerm{sym: w.y, coeff: res.v[w.y]})
		}
	}
	if len(form.terms) >= len(direct.terms) {
		return direct
	}
	return form
}

// windowSystem returns the augmented rows [base_0[s] … base_{n−1}[s] | l[s]]
// for every symbol s outside allowed that l or a window base uses: the
// coefficients α with Σ α_k·base_k = l on those symbols.
func (b *tableBuilder) windowSystem(l *denseAffine, allowed map[int]bool) [][]fr.Element {
	n := len(b.window)
	var rows [][]fr.Element
	for s := range l.v {
		if allowed[s] {
			continue
		}
		row := make([]fr.Element, n+1)
		used := !l.v[s].IsZero()
		for k, w := range b.window {
			row[k] = w.base.v[s]
			used = used || !row[k].IsZero()
		}
		if used {
			row[n] = l.v[s]
			rows = append(rows, row)
		}
	}
	return rows
}

// solveLinear solves the augmented system rows (each n coefficients and a
// right-hand side) by Gauss–Jordan elimination, in place. Free unknowns are
// set to zero; ok is false when the system is inconsistent.
func solveLinear(rows [][]fr.Element, n int) (x []fr.Element, ok bool) {
	var pivCols []int
	for col := 0; col < n && len(pivCols) < len(rows); col++ {
		pr := len(pivCols)
		sel := pr
		for sel < len(rows) && rows[sel][col].IsZero() {
			sel++
		}
		if sel == len(rows) {
			continue
		}
		rows[pr], rows[sel] = rows[sel], rows[pr]
		var inv, t fr.Element
		inv.Inverse(&rows[pr][col])
		for j := range rows[pr] {
			rows[pr][j].Mul(&rows[pr][j], &inv)
		}
		for r := range rows {
			if r == pr || rows[r][col].IsZero() {
				continue
			}
			f := rows[r][col]
			for j := range rows[r] {
				t.Mul(&f, &rows[pr][j])
				rows[r][j].Sub(&rows[r][j], &t)
			}
		}
		pivCols = append(pivCols, col)
	}
	for _, row := range rows[len(pivCols):] {
		if !row[n].IsZero() {
			return nil, false
		}
	}
	x = make([]fr.Element, n)
	for i, col := range pivCols {
		x[col] = rows[i][n]
	}
	return x, true
}
