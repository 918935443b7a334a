package poseidon

import (
	"fmt"

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
	defer api.Namespace("poseidon")()
	tab := p.gadgetTables()
	outs := make([]r1cs.Variable, len(tab.sboxIn))
	var x r1cs.LC
	for k := range tab.sboxIn {
		x = expand(x[:0], &tab.sboxIn[k], in, outs)
		outs[k] = sboxGadget(api, x)
	}
	lanes := make([]r1cs.LC, p.T)
	for i := range lanes {
		lanes[i] = expand(nil, &tab.out[i], in, outs)
	}
	return lanes, nil
}

// expand appends the linear combination of a to dst: input symbols are
// replaced by (scaled copies of) the input lanes, S-box symbols by the
// variables in outs.
func expand(dst r1cs.LC, a *affine, in []r1cs.LC, outs []r1cs.Variable) r1cs.LC {
	t := len(in)
	if !a.c.IsZero() {
		dst = append(dst, r1cs.Term{Var: r1cs.One, Coeff: a.c})
	}
	for _, st := range a.terms {
		if st.sym >= t {
			dst = dst.AddTerm(st.coeff, outs[st.sym-t])
			continue
		}
		for _, lt := range in[st.sym] {
			lt.Coeff.Mul(&lt.Coeff, &st.coeff)
			dst = append(dst, lt)
		}
	}
	return dst
}

// sboxGadget returns y = x^5 with three constraints:
// x·x = x2, x2·x2 = x4, x4·x = y.
func sboxGadget(api r1cs.API, x r1cs.LC) r1cs.Variable {
	var v2, v4, v5 fr.Element
	if api.Proving() {
		v := api.Eval(x)
		v2.Square(&v)
		v4.Square(&v2)
		v5.Mul(&v4, &v)
	}
	x2 := api.Private(v2)
	api.Enforce(x, x, r1cs.V(x2))
	x4 := api.Private(v4)
	api.Enforce(r1cs.V(x2), r1cs.V(x2), r1cs.V(x4))
	y := api.Private(v5)
	api.Enforce(r1cs.V(x4), x, r1cs.V(y))
	return y
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
	out, err := p.PermuteGadget(api, lanes)
	if err != nil {
		return nil, err
	}
	return out[1], nil
}
