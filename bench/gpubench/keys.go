package gpubench

import (
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// KeyInfo is the key cache's report plus the compile time of the shape.
type KeyInfo struct {
	devkeys.Info
	Compile time.Duration
	Shape   *r1cs.System // the compiled circuit: proofs solve with r1cs.WithShape(Shape)
}

// DevKeys compiles c and returns its development keys from devkeys (cached
// in dir; "" disables the cache), named by target so that the prover
// benchmark shares the files. The circuit seed only changes the witness, so
// it is not part of the name; the shape hash in the name catches the rest.
func DevKeys(dir string, c *porep.Circuit, setupSeed uint64) (*groth16.ProvingKey, *groth16.VerifyingKey, KeyInfo, error) {
	var info KeyInfo
	start := time.Now()
	sys, err := r1cs.Compile(c)
	if err != nil {
		return nil, nil, info, fmt.Errorf("compile porep-synth %s: %w", stats.FormatCount(c.Layout.Target), err)
	}
	info.Compile, info.Shape = time.Since(start), sys
	pk, vk, got, err := devkeys.Get(dir, fmt.Sprintf("porep-synth-%d", c.Layout.Target), sys, setupSeed)
	info.Info = got
	return pk, vk, info, err
}
