package main

import (
	"fmt"
	"io"
	"time"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// keyInfo is the key cache's report plus the compile time of the shape.
type keyInfo struct {
	devkeys.Info
	compile time.Duration
	shape   *r1cs.System // the compiled circuit: proofs solve with r1cs.WithShape(shape)
}

// devKeys compiles c and returns its development keys from devkeys (cached
// in dir; "" disables the cache), named by target so that the prover
// benchmark shares the files. The circuit seed only changes the witness, so
// it is not part of the name; the shape hash in the name catches the rest.
func devKeys(dir string, c *porep.Circuit, setupSeed uint64) (*groth16.ProvingKey, *groth16.VerifyingKey, keyInfo, error) {
	var info keyInfo
	start := time.Now()
	sys, err := r1cs.Compile(c)
	if err != nil {
		return nil, nil, info, fmt.Errorf("compile porep-synth %s: %w", sizeString(c.Layout.Target), err)
	}
	info.compile, info.shape = time.Since(start), sys
	pk, vk, got, err := devkeys.Get(dir, fmt.Sprintf("porep-synth-%d", c.Layout.Target), sys, setupSeed)
	info.Info = got
	return pk, vk, info, err
}

// printKeyInfo says where the keys came from and what that cost.
func printKeyInfo(w io.Writer, info keyInfo, pk *groth16.ProvingKey) {
	points := len(pk.G1.A) + len(pk.G1.B) + len(pk.G1.L) + len(pk.G1.H)
	if info.Cached {
		fmt.Fprintf(w, "keys: loaded %s (%s, %d G1 + %d G2 points) in %s\n",
			info.PKPath, byteSize(info.PKSize), points, len(pk.G2.B), ms(info.Load))
		return
	}
	if info.Replaced != "" {
		fmt.Fprintf(w, "keys: cached key not used (%s); replacing it\n", info.Replaced)
	}
	fmt.Fprintf(w, "keys: development setup (NOT for production): compile %s, setup %s (%d G1 + %d G2 points)\n",
		ms(info.compile), ms(info.Setup), points, len(pk.G2.B))
	if info.PKPath != "" {
		fmt.Fprintf(w, "keys: stored %s (%s) in %s; the next run loads it\n", info.PKPath, byteSize(info.PKSize), ms(info.Store))
	}
}
