package poseidon

import (
	"fmt"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// PermuteGadget enforces the permutation of the T lanes in and returns the
// output lanes as linear combinations. It adds exactly p.Constraints()
// constraints and as many private variables, under the namespace
// "poseidon".
func (p *Params) PermuteGadget(api r1cs.API, in []r1cs.LC) ([]r1cs.LC, error) {
	if len(in) != p.T {
		return nil, fmt.Errorf("poseidon gadget: %d input lanes, want %d", len(in), p.T)
	}
	g := p.permute(api, in)
	lanes := make([]r1cs.LC, p.T)
	for i := range lanes {
		lanes[i] = g.lc(nil, &g.tab.out[i])
	}
	p.release(g)
	return lanes, nil
}

// HashGadget is the gadget of Hash: it permutes (DomainTag(len(inputs)),
// inputs, 0…) and returns lane 1.
func (p *Params) HashGadget(api r1cs.API, inputs ...r1cs.LC) (r1cs.LC, error) {
	if len(inputs) == 0 || len(inputs) > p.Arity() {
		return nil, fmt.Errorf("poseidon hash gadget: %d inputs, width %d takes 1..%d", len(inputs), p.T, p.Arity())
	}
	lanes := make([]r1cs.LC, p.T)
	lanes[0] = r1cs.Const(DomainTag(len(inputs)))
	copy(lanes[1:], inputs)
	g := p.permute(api, lanes)
	out := g.lc(nil, &g.tab.out[1])
	p.release(g)
	return out, nil
}

// gadget is one run of the permutation gadget: the variable of every
// symbol, and LC buffers reused across S-boxes, which Enforce allows since
// it does not retain its arguments. In shape mode, and for an API without
// direct rows, r1cs.Bind and r1cs.Product compute each variable from its
// constraint. In proving mode (rows not nil) the gadget keeps every
// symbol's value instead, evaluates each S-box input from the symbols'
// values (the inputs' lanes evaluated once) and passes each row's values
// (r1cs.Direct): the same rows and variables, without building the
// combinations. Runs take their gadget from the Params' pool and give it
// back, so a permutation allocates nothing in the steady state.
type gadget struct {
	api    r1cs.API
	rows   r1cs.Rows
	tab    *tables
	in     []r1cs.LC
	vars   []r1cs.Variable // symbols ≥ T
	vals   []fr.Element    // every symbol's value, with rows
	x, bx  r1cs.LC         // S-box input and its bound variable
	v1, v2 r1cs.LC         // single-variable buffers
}

// permute enforces the permutation of in (len(in) == p.T) and returns the
// gadget holding its symbols.
func (p *Params) permute(api r1cs.API, in []r1cs.LC) *gadget {
	defer api.Namespace("poseidon")()
	tab := p.gadgetTables()
	g, _ := p.gadgets.Get().(*gadget)
	if g == nil {
		g = &gadget{vars: make([]r1cs.Variable, tab.nsym)}
	}
	g.api, g.tab, g.in, g.rows = api, tab, in, r1cs.Direct(api)
	if g.rows == nil {
		for k := range tab.steps {
			g.sbox(&tab.steps[k])
		}
		return g
	}
	if len(g.vals) < tab.nsym {
		g.vals = make([]fr.Element, tab.nsym)
	}
	for i := range in {
		g.vals[i] = api.Eval(in[i])
	}
	for k := range tab.steps {
		g.sboxValues(&tab.steps[k])
	}
	return g
}

// release returns g to p's pool, dropping its references to the caller's
// API and lanes. Its variables need no clearing: every symbol is written
// before it is read.
func (p *Params) release(g *gadget) {
	g.api, g.in = nil, nil
	p.gadgets.Put(g)
}

// sbox enforces one S-box step: the optional binding of its input, then
// y = x^5 with three constraints x·x = x2, x2·x2 = x4, x4·x = y.
func (g *gadget) sbox(s *sboxStep) {
	g.x = g.lc(g.x[:0], &s.in)
	x, ySym := g.x, s.sym
	if s.bind {
		xv := r1cs.Bind(g.api, g.x)
		g.vars[s.sym] = xv
		g.bx = single(g.bx, xv)
		x, ySym = g.bx, s.sym+1
	}
	g.v1 = single(g.v1, r1cs.Product(g.api, x, x))
	g.v2 = single(g.v2, r1cs.Product(g.api, g.v1, g.v1))
	g.vars[ySym] = r1cs.Product(g.api, g.v2, x)
}

// sboxValues is sbox with direct rows: the rows Bind and Product add, from
// the symbols' values.
func (g *gadget) sboxValues(s *sboxStep) {
	x := g.value(&s.in)
	ySym := s.sym
	if s.bind { // x·1 = xv
		g.vars[s.sym] = g.api.Private(x)
		g.rows.EnforceValues(&x, &montOne, &x)
		g.vals[s.sym] = x
		ySym++
	}
	var x2, x4 fr.Element
	x2.Square(&x)
	g.api.Private(x2)
	g.rows.EnforceValues(&x, &x, &x2)
	x4.Square(&x2)
	g.api.Private(x4)
	g.rows.EnforceValues(&x2, &x2, &x4)
	y := &g.vals[ySym]
	y.Mul(&x4, &x)
	g.vars[ySym] = g.api.Private(*y)
	g.rows.EnforceValues(&x4, &x, y)
}

// value is a's value from the symbols' values: what Eval gives for the
// combination lc builds.
func (g *gadget) value(a *affine) fr.Element {
	v := a.c
	var t fr.Element
	for i := range a.terms {
		st := &a.terms[i]
		t.Mul(&st.coeff, &g.vals[st.sym])
		v.Add(&v, &t)
	}
	return v
}

var montOne = fr.One()

// single sets buf to the linear combination 1·v.
func single(buf r1cs.LC, v r1cs.Variable) r1cs.LC {
	return append(buf[:0], r1cs.Term{Var: v, Coeff: montOne})
}

// lc appends a as a linear combination to dst: input symbols become (scaled
// copies of) the input lanes, other symbols their variables.
func (g *gadget) lc(dst r1cs.LC, a *affine) r1cs.LC {
	if a.tmpl != nil {
		start := len(dst)
		dst = append(dst, a.tmpl...)
		if !a.c.IsZero() {
			start++ // the constant's One stays
		}
		for i := start; i < len(dst); i++ {
			dst[i].Var = g.vars[dst[i].Var]
		}
		return dst
	}
	t := len(g.in)
	dst = slices.Grow(dst, len(a.terms)+1)
	if !a.c.IsZero() {
		dst = append(dst, r1cs.Term{Var: r1cs.One, Coeff: a.c})
	}
	for i := range a.terms {
		st := &a.terms[i]
		if st.sym >= t {
			dst = append(dst, r1cs.Term{Var: g.vars[st.sym], Coeff: st.coeff})
			continue
		}
		for _, lt := range g.in[st.sym] {
			if st.coeff != montOne {
				lt.Coeff.Mul(&lt.Coeff, &st.coeff)
			}
			dst = append(dst, lt)
		}
	}
	return dst
}
