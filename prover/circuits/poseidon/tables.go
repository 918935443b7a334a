package poseidon

import "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

// The gadget allocates one variable per S-box output and nothing for the
// linear layers. Every S-box input and every output lane is an affine
// function of the permutation's input lanes and of earlier S-box outputs,
// with coefficients that depend on the parameters only. tables holds those
// functions, found once per Params by running the permutation on symbols:
// symbol i < T is input lane i, symbol T+k is the output of S-box k.

// symTerm is coeff·symbol.
type symTerm struct {
	sym   int
	coeff fr.Element
}

// affine is c + Σ coeff·symbol with nonzero coefficients only.
type affine struct {
	c     fr.Element
	terms []symTerm
}

// tables holds the input of every S-box in evaluation order and the final
// state lanes.
type tables struct {
	sboxIn []affine
	out    []affine
}

func (p *Params) gadgetTables() *tables {
	p.tablesOnce.Do(func() { p.tab = buildTables(p) })
	return p.tab
}

// denseAffine is c + Σ v[s]·symbol s over all symbols.
type denseAffine struct {
	c fr.Element
	v []fr.Element
}

func buildTables(p *Params) *tables {
	nsym := p.T + p.SBoxes()
	state := make([]denseAffine, p.T)
	for i := range state {
		state[i].v = make([]fr.Element, nsym)
		state[i].v[i].SetOne()
	}
	tab := &tables{sboxIn: make([]affine, 0, p.SBoxes())}
	half := p.RF / 2
	hi := p.T // symbols in use: [0, hi)
	for r := 0; r < p.RF+p.RP; r++ {
		full := r < half || r >= half+p.RP
		for i := range state {
			state[i].c.Add(&state[i].c, &p.RoundConstants[r*p.T+i])
			if !full && i != 0 {
				continue
			}
			tab.sboxIn = append(tab.sboxIn, sparse(&state[i], hi))
			clear(state[i].v)
			state[i].c.SetZero()
			state[i].v[hi].SetOne()
			hi++
		}
		state = symbolicMDS(p, state, hi)
	}
	for i := range state {
		tab.out = append(tab.out, sparse(&state[i], hi))
	}
	return tab
}

// symbolicMDS returns M·state over the symbols [0, hi).
func symbolicMDS(p *Params, state []denseAffine, hi int) []denseAffine {
	next := make([]denseAffine, len(state))
	var t fr.Element
	for i := range next {
		next[i].v = make([]fr.Element, len(state[i].v))
		for j := range state {
			m := &p.MDS[i][j]
			t.Mul(m, &state[j].c)
			next[i].c.Add(&next[i].c, &t)
			for s := 0; s < hi; s++ {
				if state[j].v[s].IsZero() {
					continue
				}
				t.Mul(m, &state[j].v[s])
				next[i].v[s].Add(&next[i].v[s], &t)
			}
		}
	}
	return next
}

func sparse(d *denseAffine, hi int) affine {
	a := affine{c: d.c}
	for s := 0; s < hi; s++ {
		if !d.v[s].IsZero() {
			a.terms = append(a.terms, symTerm{sym: s, coeff: d.v[s]})
		}
	}
	return a
}
