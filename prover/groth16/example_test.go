package groth16_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// Example shows the whole flow: shape, development setup, solve, prove,
// verify. Errors are elided with panics for brevity.
func Example() {
	circuit := r1cstest.NewCubic(3) // knows x with x³ + x + 5 = 35
	sys, err := r1cs.Compile(circuit)
	if err != nil {
		panic(err)
	}
	pk, vk, err := groth16.Setup(sys, rand.Reader) // development only
	if err != nil {
		panic(err)
	}
	asg, err := r1cs.Solve(circuit, r1cs.WithShape(sys))
	if err != nil {
		panic(err)
	}
	backend, err := cpu.New()
	if err != nil {
		panic(err)
	}
	public := asg.PublicInputs()
	proof, err := groth16.Prove(context.Background(), pk, asg, backend, rand.Reader)
	if err != nil {
		panic(err)
	}
	fmt.Println("public:", public[0].String(), "verified:", groth16.Verify(vk, proof, public) == nil)
	// Output: public: 35 verified: true
}
