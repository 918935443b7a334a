package sha256

import (
	"crypto/sha256"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Circuit proves knowledge of a private Message whose SHA-256 digest is
// public, given as two field elements: the big-endian integers of digest
// bytes 0–15 (Digest[0]) and 16–31 (Digest[1]). The message length is part
// of the circuit's shape.
type Circuit struct {
	Message []byte
	Digest  [2]fr.Element
}

// NewCircuit returns the circuit for msg with the digest computed natively.
func NewCircuit(msg []byte) *Circuit {
	d := sha256.Sum256(msg)
	c := &Circuit{Message: msg}
	c.Digest[0].SetBytes(d[:16])
	c.Digest[1].SetBytes(d[16:])
	return c
}

// Define implements r1cs.Circuit.
func (c *Circuit) Define(api r1cs.API) error {
	hi, lo := api.Public(c.Digest[0]), api.Public(c.Digest[1])
	pop := api.Namespace("message")
	msg := AllocBytes(api, c.Message)
	pop()
	digest := Sum(api, msg)
	defer api.Namespace("digest")()
	for i, v := range []r1cs.Variable{hi, lo} {
		half := slices.Clone(digest[128*i : 128*i+128])
		slices.Reverse(half)
		api.Enforce(Pack(half), r1cs.ConstUint64(1), r1cs.V(v))
	}
	return nil
}
