package sha256

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Style is how the gadget lays its constraints out. Both styles compute
// the same digest with the same witness values for every bit; they differ
// in which wires the A and B matrices touch, and so in the size of a
// Groth16 key (one G1 point per wire in A, one G1 and one G2 point per wire
// in B) and of the prover's B multi-scalar multiplications.
type Style uint8

const (
	// Compact uses the fewest constraints: an addition's top carry is not
	// allocated, and its booleanity constraint u·u = 1 (u = 2·top − 1)
	// carries the packing equality, which puts every operand bit of every
	// addition in B. About 73 % of a labelled porep-synth's wires are in B.
	Compact Style = iota
	// Bellman orients the constraints as bellman's (and bellperson's)
	// SHA-256 gadget does, as in a Filecoin PoRep C2 circuit: every result
	// and carry bit of an addition is allocated with a booleanity
	// constraint, the packing equality (Σ operands)·1 = Σ 2^i·bit has the
	// operands in A and the new bits in C, and Maj's second constraint is
	// (b + c − 2bc)·a. Only allocated bits (additions' results, message and
	// carry bits) reach B: about a quarter of a compression's wires; nearly
	// every wire is in A. One constraint and one variable more per addition
	// with a carry.
	Bellman
)

// String names the style.
func (s Style) String() string {
	switch s {
	case Compact:
		return "compact"
	case Bellman:
		return "bellman"
	}
	return fmt.Sprintf("Style(%d)", uint8(s))
}

// Sum is the package's Sum in style s.
func (s Style) Sum(api r1cs.API, msg []Bit) []Bit {
	g := s.gates(api)
	return g.sum(msg)
}

// Compress is the package's Compress in style s.
func (s Style) Compress(api r1cs.API, state [8]Word, block []Bit) [8]Word {
	g := s.gates(api)
	return g.compress(state, block)
}
