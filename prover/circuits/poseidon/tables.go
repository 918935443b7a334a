package poseidon

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// The gadget's linear layers cost no constraints of their own: every S-box
// input and every output lane is an affine function of symbols, and tables
// holds those functions, found once per Params by running the permutation on
// symbols. Symbol i < T is input lane i; every S-box then adds a symbol for
// its output y and, when its input is bound to a variable, one for that
// input x just before.
//
// Every S-box input after the first round is bound (r1cs.Bind, one
// constraint): the S-box uses its input twice, and solving costs a
// multiplication per term of every use, so one evaluation of the input and
// two one-term uses are cheaper than two evaluations. Folding every linear
// layer would also make a partial round's input depend on all S-box outputs
// since the last full round (T + r terms in partial round r, up to 72 for
// Width9). Bound inputs avoid that: the T lanes are an affine function of
// the state T rounds earlier and the S-box outputs since, and T consecutive
// lane-0 inputs determine that state when the partial rounds are observable
// (they are for every parameter set here), so partial input x_r is an affine
// function of x_{r−T} … x_{r−1} and y_{r−T} … y_{r−1}: at most 2T terms
// (2T − 1 in practice) whatever r is. The lanes entering the first full
// round after the partial rounds are re-expressed alike. rewrite finds these
// forms, checks each, and keeps the folded form where a check fails.

// symTerm is coeff·symbol.
type symTerm struct {
	sym   int
	coeff fr.Element
}

// affine is c + Σ coeff·symbol with nonzero coefficients only. When no
// input symbol occurs, tmpl holds it as a linear combination whose Var
// fields carry the symbols (the constant, if any, first as 1·One): the gadget
// copies it and replaces the symbols by their variables.
type affine struct {
	c     fr.Element
	terms []symTerm
	tmpl  r1cs.LC
}

// setTemplate fills a.tmpl unless a uses an input symbol (< t).
func (a *affine) setTemplate(t int) {
	lc := make(r1cs.LC, 0, len(a.terms)+1)
	if !a.c.IsZero() {
		lc = append(lc, r1cs.Term{Var: r1cs.One, Coeff: a.c})
	}
	for _, st := range a.terms {
		if st.sym < t {
			return
		}
		lc = append(lc, r1cs.Term{Var: r1cs.Variable(st.sym), Coeff: st.coeff})
	}
	a.tmpl = lc
}

// sboxStep is one S-box in evaluation order: its input, and whether that
// input is bound to a variable (symbol sym) before the S-box; the output is
// symbol sym+1 if so, sym otherwise.
type sboxStep struct {
	in   affine
	bind bool
	sym  int
}

// tables holds the S-boxes in evaluation order, the final state lanes and
// the number of symbols.
type tables struct {
	steps []sboxStep
	out   []affine
	nsym  int
	bound int
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

// partialRec remembers a bound partial-round input: its symbols and its
// value as a function of the unbound symbols (inputs and S-box outputs).
type partialRec struct {
	x, y int
	base denseAffine
}

type tableBuilder struct {
	p      *Params
	tab    *tables
	state  []denseAffine // over inputs and S-box outputs only
	window []partialRec  // the last T partial rounds
}

func buildTables(p *Params) *tables {
	nsym := p.T + 2*p.SBoxes()
	b := &tableBuilder{p: p, tab: &tables{nsym: p.T}, state: make([]denseAffine, p.T)}
	for i := range b.state {
		b.state[i].v = make([]fr.Element, nsym)
		b.state[i].v[i].SetOne()
	}
	half := p.RF / 2
	for r := 0; r < p.RF+p.RP; r++ {
		full := r < half || r >= half+p.RP
		afterPartial := p.RP > 0 && r == half+p.RP
		for i := range b.state {
			b.state[i].c.Add(&b.state[i].c, &p.RoundConstants[r*p.T+i])
			switch {
			case !full && i == 0:
				b.addPartial()
			case afterPartial:
				b.addFull(i, b.rewrite(&b.state[i]), true)
			case full:
				b.addFull(i, sparse(&b.state[i]), r > 0)
			}
		}
		b.state = symbolicMDS(p, b.state)
	}
	for i := range b.state {
		b.tab.out = append(b.tab.out, sparse(&b.state[i]))
		b.tab.out[i].setTemplate(p.T)
	}
	for k := range b.tab.steps {
		b.tab.steps[k].in.setTemplate(p.T)
	}
	return b.tab
}

// addFull adds the S-box of lane i in a full round, with input form in.
func (b *tableBuilder) addFull(i int, in affine, bind bool) {
	y := b.addStep(in, bind)
	b.state[i].setSymbol(y)
}

// addPartial adds the S-box of lane 0 in a partial round and remembers its
// bound input for the rewriting of later inputs.
func (b *tableBuilder) addPartial() {
	in := b.rewrite(&b.state[0])
	y := b.addStep(in, true)
	rec := partialRec{x: y - 1, y: y, base: b.state[0].clone()}
	b.window = append(b.window, rec)
	if len(b.window) > b.p.T {
		b.window = b.window[1:]
	}
	b.state[0].setSymbol(y)
}

// addStep appends an S-box step and returns its output symbol.
func (b *tableBuilder) addStep(in affine, bind bool) int {
	t := b.tab
	t.steps = append(t.steps, sboxStep{in: in, bind: bind, sym: t.nsym})
	if bind {
		t.nsym++
		t.bound++
	}
	t.nsym++
	return t.nsym - 1
}

// setSymbol makes d the single symbol s.
func (d *denseAffine) setSymbol(s int) {
	clear(d.v)
	d.c.SetZero()
	d.v[s].SetOne()
}

func (d *denseAffine) clone() denseAffine {
	return denseAffine{c: d.c, v: append([]fr.Element(nil), d.v...)}
}

// symbolicMDS returns M·state.
func symbolicMDS(p *Params, state []denseAffine) []denseAffine {
	next := make([]denseAffine, len(state))
	var t fr.Element
	for i := range next {
		next[i].v = make([]fr.Element, len(state[i].v))
		for j := range state {
			m := &p.MDS[i][j]
			t.Mul(m, &state[j].c)
			next[i].c.Add(&next[i].c, &t)
			for s := range state[j].v {
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

func sparse(d *denseAffine) affine {
	a := affine{c: d.c}
	for s := range d.v {
		if !d.v[s].IsZero() {
			a.terms = append(a.terms, symTerm{sym: s, coeff: d.v[s]})
		}
	}
	return a
}
