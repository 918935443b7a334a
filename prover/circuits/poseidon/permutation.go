package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Permute applies the Poseidon permutation to state in place. len(state) must
// be p.T.
func (p *Params) Permute(state []fr.Element) {
	if len(state) != p.T {
		panic(fmt.Sprintf("poseidon: state has %d lanes, want %d", len(state), p.T))
	}
	half := p.RF / 2
	rc := p.RoundConstants
	tmp := make([]fr.Element, p.T)
	for r := 0; r < p.RF+p.RP; r++ {
		full := r < half || r >= half+p.RP
		for i := range state {
			state[i].Add(&state[i], &rc[r*p.T+i])
			if full || i == 0 {
				sbox(&state[i])
			}
		}
		p.mulMDS(tmp, state)
		copy(state, tmp)
	}
}

// sbox sets x to x^5.
func sbox(x *fr.Element) {
	var x2, x4 fr.Element
	x2.Square(x)
	x4.Square(&x2)
	x.Mul(&x4, x)
}

// mulMDS sets dst = M·src.
func (p *Params) mulMDS(dst, src []fr.Element) {
	var t fr.Element
	for i := range dst {
		dst[i].SetZero()
		for j := range src {
			t.Mul(&p.MDS[i][j], &src[j])
			dst[i].Add(&dst[i], &t)
		}
	}
}

// DomainTag is the capacity value Hash uses for n inputs: 2^n − 1, the
// Merkle-tree tag of neptune for a node with n children.
func DomainTag(n int) fr.Element {
	var e fr.Element
	e.SetUint64(1<<uint(n) - 1)
	return e
}

// Hash returns lane 1 of the permutation of (DomainTag(len(inputs)), inputs,
// 0…). It needs 1 ≤ len(inputs) ≤ p.Arity().
func (p *Params) Hash(inputs ...fr.Element) (fr.Element, error) {
	if len(inputs) == 0 || len(inputs) > p.Arity() {
		return fr.Element{}, fmt.Errorf("poseidon hash: %d inputs, width %d takes 1..%d", len(inputs), p.T, p.Arity())
	}
	state := make([]fr.Element, p.T)
	state[0] = DomainTag(len(inputs))
	copy(state[1:], inputs)
	p.Permute(state)
	return state[1], nil
}
