package groth16_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// ExampleWithTrace collects one proof's phases with a PhaseTimes and stops
// the next proof from its trace once its quotient is done.
func ExampleWithTrace() {
	circuit := r1cstest.NewCubic(3)
	sys, err := r1cs.Compile(circuit)
	if err != nil {
		panic(err)
	}
	pk, _, err := groth16.Setup(sys, rand.Reader) // development only
	if err != nil {
		panic(err)
	}
	backend, err := cpu.New()
	if err != nil {
		panic(err)
	}
	var times groth16.PhaseTimes
	asg, err := r1cs.Solve(circuit, r1cs.WithShape(sys))
	if err != nil {
		panic(err)
	}
	if _, err := groth16.Prove(groth16.WithTrace(context.Background(), times.Trace()), pk, asg, backend, rand.Reader); err != nil {
		panic(err)
	}
	var names []string
	for ph := range times.Durations() {
		names = append(names, string(ph))
	}
	slices.Sort(names)
	fmt.Println(strings.Join(names, ", "))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = groth16.WithTrace(ctx, &groth16.Trace{PhaseDone: func(i groth16.PhaseInfo) {
		if i.Phase == groth16.PhaseQuotient {
			cancel()
		}
	}})
	asg, err = r1cs.Solve(circuit, r1cs.WithShape(sys))
	if err != nil {
		panic(err)
	}
	_, err = groth16.Prove(ctx, pk, asg, backend, rand.Reader)
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// host vectors, msm A, msm B1, msm B2, msm L‖H, prove, quotient
	// true
}

// ExampleSetupWith runs the development setup with its key points from a
// FixedBaser: here the CPU's, whose keys are Setup's; prover/gpu's Backend
// gives the same keys from the GPU.
func ExampleSetupWith() {
	sys, err := r1cs.Compile(r1cstest.NewCubic(3))
	if err != nil {
		panic(err)
	}
	pk, vk, err := groth16.SetupWith(context.Background(), sys, rand.Reader, groth16.CPUFixedBase{}) // development only
	if err != nil {
		panic(err)
	}
	fmt.Println("IC points:", len(vk.G1.IC), "B points in G2:", len(pk.G2.B))
	// Output: IC points: 2 B points in G2: 2
}
