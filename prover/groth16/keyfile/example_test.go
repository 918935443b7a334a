package keyfile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// ExampleOpen writes a key as a raw key file once, then maps it and proves
// from the mapping. Errors are elided with panics for brevity.
func ExampleOpen() {
	circuit := r1cstest.NewCubic(3)
	sys, err := r1cs.Compile(circuit)
	if err != nil {
		panic(err)
	}
	pk, vk, err := groth16.Setup(sys, devkeys.Rand(1, 0)) // development only
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "keyfile-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cubic.rawpk")
	if err := keyfile.Write(path, pk); err != nil { // checks every point, once
		panic(err)
	}

	k, err := keyfile.Open(path) // maps; hashes the sections, decodes nothing
	if err != nil {
		panic(err)
	}
	defer k.Close() // after the last Prove that uses k.PK
	asg, err := r1cs.Solve(circuit, r1cs.WithShape(sys))
	if err != nil {
		panic(err)
	}
	backend, err := cpu.New()
	if err != nil {
		panic(err)
	}
	public := asg.PublicInputs()
	proof, err := groth16.Prove(context.Background(), k.PK, asg, backend, devkeys.Rand(1, 1))
	if err != nil {
		panic(err)
	}
	fmt.Println("domain:", k.Header.DomainSize, "checked:", k.Header.Checked(), "verified:", groth16.Verify(vk, proof, public) == nil)
	// Output: domain: 8 checked: true verified: true
}
