package porep

import (
	"encoding/binary"
	"fmt"
	"math/rand"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/merkle"
	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
)

// Circuit is one porep-synth instance: its layout, public inputs and
// witness. It is read-only after New; Define may run concurrently.
type Circuit struct {
	Layout     Layout
	ReplicaID  [32]byte // little-endian field element below 2^254
	CommR      fr.Element
	Challenges []uint64

	commC, commRLast fr.Element
	proofs           []*merkle.Proof
	parents          [][Parents][32]byte // per labelled challenge, its parents' labels
	columns          [][]fr.Element      // per column hash, its arity − 1 fresh inputs
	columnSeed       fr.Element
	sizes            segmentSizes // of Define's segments, for r1cs.Parallel
}

// New plans the Synth layout for targetConstraints and derives the whole
// instance from seed.
func New(targetConstraints int, seed int64) (*Circuit, error) {
	return Synth.New(targetConstraints, seed)
}

// New plans the layout of shape s for targetConstraints and derives the
// whole instance from seed. The witness values of the two shapes' common
// wires are the same for one seed; the shapes differ in the SHA-256
// gadget's constraints (see Shape).
func (s Shape) New(targetConstraints int, seed int64) (*Circuit, error) {
	l, err := s.Plan(targetConstraints)
	if err != nil {
		return nil, err
	}
	sizes, err := sizesOf(l)
	if err != nil {
		return nil, fmt.Errorf("porep-synth %d: %w", targetConstraints, err)
	}
	rng := rand.New(rand.NewSource(seed))
	c := &Circuit{Layout: l, sizes: sizes}
	rng.Read(c.ReplicaID[:])
	c.ReplicaID[31] &= 0x3f
	if err := c.buildTree(rng); err != nil {
		return nil, fmt.Errorf("porep-synth %d: %w", targetConstraints, err)
	}
	if err := c.buildColumns(rng); err != nil {
		return nil, fmt.Errorf("porep-synth %d: %w", targetConstraints, err)
	}
	h, err := poseidon.Width3().Hash(c.commC, c.commRLast)
	if err != nil {
		return nil, fmt.Errorf("porep-synth %d: comm_r: %w", targetConstraints, err)
	}
	c.CommR = h
	return c, nil
}

// buildTree draws distinct challenges, sets their leaves (labels for the
// first Labelled, with their parents' labels drawn here; random values
// otherwise) and proves them.
func (c *Circuit) buildTree(rng *rand.Rand) error {
	leaves := uint64(1) << (3 * c.Layout.Depth)
	if uint64(c.Layout.Challenges) > leaves {
		return fmt.Errorf("%d challenges exceed %d leaves", c.Layout.Challenges, leaves)
	}
	set := make(map[uint64]fr.Element, c.Layout.Challenges)
	for len(c.Challenges) < c.Layout.Challenges {
		node := uint64(rng.Int63n(int64(leaves)))
		if _, dup := set[node]; dup {
			continue
		}
		var leaf fr.Element
		if len(c.Challenges) < c.Layout.Labelled {
			var ps [Parents][32]byte
			for i := range ps {
				ps[i] = randomLabel(rng)
			}
			c.parents = append(c.parents, ps)
			leaf = merkle.TruncatedSHA256(labelData(c.ReplicaID, node, ps))
		} else {
			leaf = randomElement(rng)
		}
		set[node] = leaf
		c.Challenges = append(c.Challenges, node)
	}
	tree, err := merkle.NewTree(poseidon.Width9(), c.Layout.Depth, set)
	if err != nil {
		return fmt.Errorf("tree: %w", err)
	}
	c.commRLast = tree.Root()
	for _, node := range c.Challenges {
		p, err := tree.Prove(node)
		if err != nil {
			return fmt.Errorf("tree: %w", err)
		}
		c.proofs = append(c.proofs, p)
	}
	return nil
}

// buildColumns draws the column chain's inputs and computes comm_c.
func (c *Circuit) buildColumns(rng *rand.Rand) error {
	c.columnSeed = randomElement(rng)
	acc := c.columnSeed
	for w, k := range c.Layout.Fill {
		p := fillWidths[w]()
		for range k {
			in := make([]fr.Element, p.Arity()-1)
			for i := range in {
				in[i] = randomElement(rng)
			}
			c.columns = append(c.columns, in)
			h, err := p.Hash(append([]fr.Element{acc}, in...)...)
			if err != nil {
				return fmt.Errorf("column %d: %w", len(c.columns)-1, err)
			}
			acc = h
		}
	}
	c.commC = acc
	return nil
}

func randomElement(rng *rand.Rand) fr.Element {
	var b [32]byte
	rng.Read(b[:])
	var e fr.Element
	e.SetBytes(b[:]) // reduced modulo p; the bias does not matter here
	return e
}

// randomLabel draws a parent's label: 32 bytes read as a little-endian
// integer below 2^254, as a truncated label is.
func randomLabel(rng *rand.Rand) [32]byte {
	var b [32]byte
	rng.Read(b[:])
	b[31] &= 0x3f
	return b
}

// labelData is the preimage of a node's label: the replica id, the node as
// 8 bytes little-endian and its parents' labels.
func labelData(replica [32]byte, node uint64, parents [Parents][32]byte) []byte {
	out := make([]byte, 0, labelBytes)
	out = binary.LittleEndian.AppendUint64(append(out, replica[:]...), node)
	for _, p := range parents {
		out = append(out, p[:]...)
	}
	return out
}

// PublicInputs returns the public inputs in the order Define allocates them.
func (c *Circuit) PublicInputs() []fr.Element {
	out := make([]fr.Element, 0, 2+len(c.Challenges))
	out = append(out, replicaElement(c.ReplicaID), c.CommR)
	for _, ch := range c.Challenges {
		var e fr.Element
		e.SetUint64(ch)
		out = append(out, e)
	}
	return out
}

func replicaElement(id [32]byte) fr.Element {
	var be [32]byte
	for i := range id {
		be[i] = id[31-i]
	}
	var e fr.Element
	e.SetBytes(be[:])
	return e
}
