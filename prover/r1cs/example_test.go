package r1cs_test

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// square proves knowledge of a square root of a public value.
type square struct{ root, value uint64 }

func (c square) Define(api r1cs.API) error {
	y := api.Public(fr.NewElement(c.value))
	x := api.Private(fr.NewElement(c.root))
	defer api.Namespace("square")()
	api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(y))
	return nil
}

// Example compiles a circuit's shape once and solves it for two witnesses.
func Example() {
	var shapes r1cs.Cache
	sys, err := shapes.Compile("square", square{})
	if err != nil {
		panic(err)
	}
	fmt.Println("constraints:", sys.NbConstraints, "publics:", sys.NbPublic, "domain:", sys.DomainSize())

	asg, err := r1cs.Solve(square{root: 7, value: 49}, r1cs.WithShape(sys))
	fmt.Println("7² = 49:", err == nil, "a·b = c evaluations:", len(asg.A))

	_, err = r1cs.Solve(square{root: 7, value: 50}, r1cs.WithShape(sys))
	var ue *r1cs.UnsatisfiedError
	fmt.Println("7² = 50:", errors.As(err, &ue), ue.Index, ue.Path)
	// Output:
	// constraints: 1 publics: 2 domain: 4
	// 7² = 49: true a·b = c evaluations: 4
	// 7² = 50: true 0 square
}
