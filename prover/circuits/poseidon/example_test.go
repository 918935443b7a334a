package poseidon_test

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// A Merkle node of a binary tree and the constraints proving it.
func Example() {
	p := poseidon.Width3()
	left, right := fr.NewElement(1), fr.NewElement(2)
	node, err := p.Hash(left, right)
	if err != nil {
		panic(err)
	}
	c := &poseidon.Circuit{Params: p, Inputs: []fr.Element{left, right}, Digest: node}
	sys, err := r1cs.Compile(c)
	if err != nil {
		panic(err)
	}
	_, err = r1cs.Solve(c, r1cs.WithShape(sys))
	fmt.Println(sys.NbConstraints, err)
	// Output: 322 <nil>
}
