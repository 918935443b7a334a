package porep

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/merkle"
	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/circuits/sha256"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Define's independent parts, solved concurrently by r1cs.Parallel: every
// challenge (its label and its inclusion proof) and the column chain. They
// read only the head's variables (the public inputs, the replica id's bits
// and comm_r_last); the tail (comm_r) reads the chain's output.

// size is a segment's declared counts.
type size struct{ private, constraints int }

// segmentSizes are the counts of porep-synth's segments for one layout.
type segmentSizes struct {
	plain, labelled size // one challenge without and with its label
	columns         size // the column chain
}

// sizesOf returns the segment counts of l. The challenge counts come from
// compiling one challenge (cached per depth); the column chain's follow
// from the Poseidon gadget's contract (as many private variables as
// constraints per permutation) and its fresh inputs.
func sizesOf(l Layout) (segmentSizes, error) {
	ch, err := challengeSizes(l.Shape, l.Depth)
	if err != nil {
		return segmentSizes{}, err
	}
	cols := size{private: 1, constraints: fillCost(l.Fill)} // the chain's private seed
	for w, k := range l.Fill {
		p := fillWidths[w]()
		cols.private += k * (p.Arity() - 1 + p.Constraints())
	}
	return segmentSizes{plain: ch[0], labelled: ch[1], columns: cols}, nil
}

// challengeCache holds, per shape and tree depth, a challenge's counts
// without and with its label.
var challengeCache sync.Map // challengeKey → challengeEntry

type challengeKey struct {
	shape Shape
	depth int
}

type challengeEntry struct {
	sizes [2]size
	err   error
}

func challengeSizes(shape Shape, depth int) ([2]size, error) {
	key := challengeKey{shape, depth}
	if e, ok := challengeCache.Load(key); ok {
		return e.(challengeEntry).sizes, e.(challengeEntry).err
	}
	var e challengeEntry
	for i, labelled := range []bool{false, true} {
		if e.sizes[i], e.err = probeChallenge(shape, depth, labelled); e.err != nil {
			break
		}
	}
	challengeCache.Store(key, e)
	return e.sizes, e.err
}

// probeChallenge compiles one challenge after the head variables it reads
// and subtracts the head alone.
func probeChallenge(shape Shape, depth int, labelled bool) (size, error) {
	with, err := r1cs.Compile(challengeProbe{shape: shape, depth: depth, labelled: labelled, challenge: true})
	if err != nil {
		return size{}, fmt.Errorf("porep: compile challenge probe (depth %d): %w", depth, err)
	}
	head, err := r1cs.Compile(challengeProbe{shape: shape, depth: depth, labelled: labelled})
	if err != nil {
		return size{}, fmt.Errorf("porep: compile challenge probe head (depth %d): %w", depth, err)
	}
	return size{with.NbPrivate - head.NbPrivate, with.NbConstraints - head.NbConstraints}, nil
}

// challengeProbe is the head variables one challenge reads, then (with
// challenge) the challenge itself, on zero values.
type challengeProbe struct {
	shape               Shape
	depth               int
	labelled, challenge bool
}

func (p challengeProbe) Define(api r1cs.API) error {
	c := &Circuit{Layout: Layout{Shape: p.shape, Depth: p.depth}, Challenges: []uint64{0}}
	var replica []sha256.Bit
	if p.labelled {
		c.Layout.Labelled = 1
		c.parents = make([][Parents][32]byte, 1)
		replica = allocReplica(api, [32]byte{})
	}
	chal, root := api.Public(fr.Element{}), api.Private(fr.Element{})
	if !p.challenge {
		return nil
	}
	proof := &merkle.Proof{Siblings: make([][]fr.Element, p.depth)}
	for l := range proof.Siblings {
		proof.Siblings[l] = make([]fr.Element, poseidon.Width9().Arity()-1)
	}
	return c.challenge(api, 0, proof, replica, chal, root)
}

// segments returns Define's independent parts in the order Define runs
// them; the column chain's segment stores comm_c in *commC.
func (c *Circuit) segments(replicaBits []sha256.Bit, chals []r1cs.Variable, rootLast r1cs.Variable, commC *r1cs.LC) []r1cs.Segment {
	segs := make([]r1cs.Segment, 0, len(c.proofs)+1)
	for i, p := range c.proofs {
		sz := c.sizes.plain
		if i < c.Layout.Labelled {
			sz = c.sizes.labelled
		}
		segs = append(segs, r1cs.Segment{Private: sz.private, Constraints: sz.constraints,
			Define: func(api r1cs.API) error { return c.challenge(api, i, p, replicaBits, chals[i], rootLast) }})
	}
	segs = append(segs, r1cs.Segment{Private: c.sizes.columns.private, Constraints: c.sizes.columns.constraints,
		Define: func(api r1cs.API) (err error) {
			*commC, err = c.columnChain(api)
			return err
		}})
	return segs
}
