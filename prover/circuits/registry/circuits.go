package registry

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/merkle"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	sha "github.com/cuzk-dev/cuzk/prover/circuits/sha256"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// porepDef is the definition of one porep-synth shape: "porep-synth" (the
// compact shape of the earlier figures) or "porep-c2" (PoRep C2's
// densities).
func porepDef(shape porep.Shape) *Definition {
	return &Definition{
		ID:        shape.String(),
		Params:    []Param{{Name: "constraints", Min: porep.MinTarget, Max: porep.MaxTarget, Doc: "target constraint count", Default: 4096}},
		InputSize: func(map[string]uint64) int { return 8 },
		Build: func(p map[string]uint64, in []byte) (r1cs.Circuit, error) {
			return shape.New(int(p["constraints"]), int64(binary.LittleEndian.Uint64(in)))
		},
		Example: func(_ map[string]uint64, seed int64) ([]byte, error) {
			return binary.LittleEndian.AppendUint64(nil, uint64(seed)), nil
		},
		Counts: func(p map[string]uint64) (*r1cs.System, error) { return shape.Counts(int(p["constraints"])) },
	}
}

func sha256Def() *Definition {
	return &Definition{
		ID:        "sha256",
		Params:    []Param{{Name: "bytes", Min: 1, Max: 1 << 16, Doc: "message length", Default: 64}},
		InputSize: func(p map[string]uint64) int { return int(p["bytes"]) },
		Build: func(_ map[string]uint64, in []byte) (r1cs.Circuit, error) {
			return sha.NewCircuit(append([]byte(nil), in...)), nil
		},
		Example: func(p map[string]uint64, seed int64) ([]byte, error) {
			b := make([]byte, p["bytes"])
			rand.New(rand.NewSource(seed)).Read(b)
			return b, nil
		},
	}
}

// merkleArity is poseidon-merkle's tree arity (Poseidon width 9).
const merkleArity = 8

func poseidonMerkle() *Definition {
	size := func(p map[string]uint64) int { return 8 + 32 + int(p["depth"])*(merkleArity-1)*32 }
	return &Definition{
		ID:        "poseidon-merkle",
		Params:    []Param{{Name: "depth", Min: 1, Max: 16, Doc: "levels of the arity-8 tree", Default: 2}},
		InputSize: size,
		Check: func(p map[string]uint64, in []byte) error {
			_, err := decodeMerkle(int(p["depth"]), in)
			return err
		},
		Build: func(p map[string]uint64, in []byte) (r1cs.Circuit, error) {
			proof, err := decodeMerkle(int(p["depth"]), in)
			if err != nil {
				return nil, err
			}
			params := poseidon.Width9()
			root, err := proof.ComputeRoot(params)
			if err != nil {
				return nil, err
			}
			return &merkle.Circuit{Params: params, Proof: proof, Root: root}, nil
		},
		Example: func(p map[string]uint64, seed int64) ([]byte, error) {
			depth := int(p["depth"])
			rng := rand.New(rand.NewSource(seed))
			index := uint64(rng.Int63n(int64(1) << (3 * depth)))
			var leaf fr.Element
			h := sha256.Sum256(binary.LittleEndian.AppendUint64(nil, uint64(seed)))
			leaf.SetBytes(h[:])
			tree, err := merkle.NewTree(poseidon.Width9(), depth, map[uint64]fr.Element{index: leaf})
			if err != nil {
				return nil, err
			}
			proof, err := tree.Prove(index)
			if err != nil {
				return nil, err
			}
			out := binary.LittleEndian.AppendUint64(make([]byte, 0, size(p)), index)
			lb := proof.Leaf.Bytes()
			out = append(out, lb[:]...)
			for _, level := range proof.Siblings {
				for _, s := range level {
					sb := s.Bytes()
					out = append(out, sb[:]...)
				}
			}
			return out, nil
		},
	}
}

// decodeMerkle reads poseidon-merkle's input (see the package comment).
func decodeMerkle(depth int, in []byte) (*merkle.Proof, error) {
	proof := &merkle.Proof{Index: binary.LittleEndian.Uint64(in[:8]), Siblings: make([][]fr.Element, depth)}
	if proof.Index >= uint64(1)<<(3*depth) {
		return nil, fmt.Errorf("index %d: beyond the %d leaves of a depth-%d tree", proof.Index, uint64(1)<<(3*depth), depth)
	}
	var err error
	if proof.Leaf, err = decodeElement(in[8:40], "leaf"); err != nil {
		return nil, err
	}
	off := 40
	for l := range proof.Siblings {
		proof.Siblings[l] = make([]fr.Element, merkleArity-1)
		for j := range proof.Siblings[l] {
			if proof.Siblings[l][j], err = decodeElement(in[off:off+32], fmt.Sprintf("siblings[%d][%d]", l, j)); err != nil {
				return nil, err
			}
			off += 32
		}
	}
	return proof, nil
}
