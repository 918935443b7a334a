package merkle

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/circuits/sha256"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Circuit proves that a private leaf sits at a public index under a public
// root. When LeafData is set, the leaf is TruncatedSHA256(LeafData),
// computed in the circuit from private data bytes; otherwise it is
// Proof.Leaf. Public inputs: Root, then Index.
type Circuit struct {
	Params   *poseidon.Params
	Proof    *Proof
	LeafData []byte
	Root     fr.Element
}

// NewCircuit returns the circuit proving leaf index of tree.
func NewCircuit(tree *Tree, index uint64) (*Circuit, error) {
	p, err := tree.Prove(index)
	if err != nil {
		return nil, fmt.Errorf("merkle circuit: %w", err)
	}
	return &Circuit{Params: tree.params, Proof: p, Root: tree.Root()}, nil
}

// NewSHA256Circuit returns the circuit proving that the leaf at index of
// tree is TruncatedSHA256(data).
func NewSHA256Circuit(tree *Tree, index uint64, data []byte) (*Circuit, error) {
	c, err := NewCircuit(tree, index)
	if err != nil {
		return nil, err
	}
	if got := TruncatedSHA256(data); got != c.Proof.Leaf {
		return nil, fmt.Errorf("merkle circuit: leaf %d is not the truncated SHA-256 of the data", index)
	}
	c.LeafData = data
	return c, nil
}

// Define implements r1cs.Circuit.
func (c *Circuit) Define(api r1cs.API) error {
	root := api.Public(c.Root)
	var idx fr.Element
	idx.SetUint64(c.Proof.Index)
	index := api.Public(idx)

	var leaf r1cs.LC
	if c.LeafData != nil {
		pop := api.Namespace("leaf")
		leaf = TruncatedSHA256Gadget(api, sha256.AllocBytes(api, c.LeafData))
		pop()
	} else {
		leaf = r1cs.V(api.Private(c.Proof.Leaf))
	}
	gotRoot, gotIndex, err := RootGadget(api, c.Params, leaf, c.Proof)
	if err != nil {
		return fmt.Errorf("merkle circuit: %w", err)
	}
	pop := api.Namespace("root")
	api.Enforce(gotRoot, r1cs.ConstUint64(1), r1cs.V(root))
	pop()
	pop = api.Namespace("index")
	api.Enforce(gotIndex, r1cs.ConstUint64(1), r1cs.V(index))
	pop()
	return nil
}
