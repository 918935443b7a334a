package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Circuit proves knowledge of private Inputs whose Hash under Params is the
// public Digest. Its constraint count is Params.Constraints() + 1.
type Circuit struct {
	Params *Params
	Inputs []fr.Element
	Digest fr.Element
}

// NewCircuit returns the circuit for inputs with the digest computed natively.
func NewCircuit(p *Params, inputs ...fr.Element) (*Circuit, error) {
	d, err := p.Hash(inputs...)
	if err != nil {
		return nil, fmt.Errorf("poseidon circuit: %w", err)
	}
	return &Circuit{Params: p, Inputs: inputs, Digest: d}, nil
}

// Define implements r1cs.Circuit.
func (c *Circuit) Define(api r1cs.API) error {
	digest := api.Public(c.Digest)
	in := make([]r1cs.LC, len(c.Inputs))
	for i, v := range c.Inputs {
		in[i] = r1cs.V(api.Private(v))
	}
	out, err := c.Params.HashGadget(api, in...)
	if err != nil {
		return fmt.Errorf("poseidon circuit: %w", err)
	}
	pop := api.Namespace("digest")
	api.Enforce(out, r1cs.ConstUint64(1), r1cs.V(digest))
	pop()
	return nil
}
