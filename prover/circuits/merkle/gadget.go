package merkle

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// LevelConstraints is the gadget's cost per tree level for arity a (a power
// of two with k = log2 a): the binding of the running node, k bit
// constraints, a − k − 1 selector products, 2a − 3 placement products and
// one permutation.
func LevelConstraints(params *poseidon.Params) int {
	return 3*params.Arity() - 3 + params.Constraints()
}

// RootGadget enforces the path of proof from the leaf lc up and returns the
// computed root and the packed leaf index Σ 2^i·bit_i, both as linear
// combinations. Siblings and index bits are private witnesses taken from
// proof (in shape mode only its dimensions matter). It adds
// depth·LevelConstraints(params) constraints under the namespace "merkle".
func RootGadget(api r1cs.API, params *poseidon.Params, leaf r1cs.LC, proof *Proof) (root, index r1cs.LC, err error) {
	defer api.Namespace("merkle")()
	a := params.Arity()
	k := bits.Len(uint(a - 1))
	cur := leaf
	i := proof.Index
	weight := fr.One()
	for l, sibs := range proof.Siblings {
		if len(sibs) != a-1 {
			return nil, nil, fmt.Errorf("merkle gadget level %d: %d siblings, want %d", l, len(sibs), a-1)
		}
		pop := api.Namespace(fmt.Sprintf("level%d", l))
		digits := make([]r1cs.Variable, k)
		for b := range digits {
			digits[b] = allocBit(api, i>>b&1 == 1)
			index = index.AddTerm(weight, digits[b])
			weight.Double(&weight)
		}
		i >>= k
		sibLC := make([]r1cs.LC, len(sibs))
		for j, s := range sibs {
			sibLC[j] = r1cs.V(api.Private(s))
		}
		// The node enters a − 1 placement products, each solving its
		// factor twice, and the last slot: bound, it costs one term in
		// each instead of its whole combination (a hash output has T + 1
		// terms, a packed SHA-256 leaf 254).
		cur = r1cs.V(r1cs.Bind(api, cur))
		slots := insertGadget(api, cur, sibLC, selectors(api, digits))
		cur, err = params.HashGadget(api, slots...)
		pop()
		if err != nil {
			return nil, nil, fmt.Errorf("merkle gadget level %d: %w", l, err)
		}
	}
	return cur, index, nil
}

// allocBit allocates a private bit constrained by v·(1 − v) = 0.
func allocBit(api r1cs.API, value bool) r1cs.Variable {
	var e fr.Element
	if value {
		e.SetOne()
	}
	v := api.Private(e)
	api.Enforce(r1cs.V(v), r1cs.ConstUint64(1).Sub(v), nil)
	return v
}

// selectors returns s_j = [index = j] for j < 2^len(digits), digits least
// significant first. Splitting each selector q on a new digit d costs the
// product q·d, except the last, which follows from Σ q·d = d:
// 2^m − 1 constraints for digit m ≥ 1, none for digit 0.
func selectors(api r1cs.API, digits []r1cs.Variable) []r1cs.LC {
	sel := []r1cs.LC{r1cs.ConstUint64(1)}
	for m, d := range digits {
		n := len(sel)
		next := make([]r1cs.LC, 2*n)
		rest := r1cs.V(d)
		for j, q := range sel {
			var r r1cs.LC
			switch {
			case m == 0:
				r = r1cs.V(d)
			case j < n-1:
				r = r1cs.V(r1cs.Product(api, q, r1cs.V(d)))
				rest = rest.Sub(r[0].Var)
			default:
				r = rest
			}
			next[j] = append(append(r1cs.LC{}, q...), negate(r)...)
			next[j+n] = r
		}
		sel = next
	}
	return sel
}

// insertGadget returns the a children of a node given the running node cur,
// the a − 1 siblings and the position selectors: slot j is cur when the
// index is j, sibs[j] when it is larger and sibs[j−1] when smaller. Slot 0
// and each middle slot take one and two products; the last slot follows
// from Σ slots = cur + Σ sibs.
func insertGadget(api r1cs.API, cur r1cs.LC, sibs, sel []r1cs.LC) []r1cs.LC {
	a := len(sel)
	slots := make([]r1cs.LC, a)
	last := append(r1cs.LC{}, cur...)
	for _, s := range sibs {
		last = last.AddLC(s)
	}
	for j := 0; j < a-1; j++ {
		base := sibs[max(j-1, 0)]
		slot := append(r1cs.LC{}, base...)
		slot = slot.Add(r1cs.Product(api, sel[j], append(append(r1cs.LC{}, cur...), negate(base)...)))
		if j > 0 {
			var lt r1cs.LC
			for _, s := range sel[j+1:] {
				lt = lt.AddLC(s)
			}
			slot = slot.Add(r1cs.Product(api, lt, append(append(r1cs.LC{}, sibs[j]...), negate(base)...)))
		}
		slots[j] = slot
		last = last.SubLC(slot)
	}
	slots[a-1] = last
	return slots
}

// negate returns −lc as a new linear combination.
func negate(lc r1cs.LC) r1cs.LC { return r1cs.LC{}.SubLC(lc) }
