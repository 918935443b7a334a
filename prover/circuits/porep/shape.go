package porep

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/circuits/sha256"
)

// Shape selects how porep-synth lays out its constraints. Both shapes have
// the same statement, sizing rule and witness values; they differ in the
// SHA-256 gadget's orientation, so in the share of wires the A and B
// matrices touch, which sizes a Groth16 key and the prover's A and B
// multi-scalar multiplications.
type Shape uint8

const (
	// Synth is porep-synth as first built (registry id "porep-synth"):
	// the SHA-256 gadget's compact style, 26 232 constraints a block, puts
	// about 73 % of the wires in B (2^20: 73.1 %; a 2^27 key of 61 GiB).
	// The figures measured before the C2 shape existed are on this shape.
	Synth Shape = iota
	// C2 is shaped like a Filecoin 32 GiB PoRep C2 partition (registry id
	// "porep-c2"): the SHA-256 gadget in bellman's orientation, as the
	// real circuit's bellperson gadget has it, so that only allocated bits
	// reach B, about a quarter of the wires. See docs/c2-shape.md for the
	// figures it is matched against and their sources.
	C2
	numShapes
)

// Shapes lists the shapes, Synth first.
var Shapes = []Shape{Synth, C2}

// String is the shape's registry id.
func (s Shape) String() string {
	switch s {
	case Synth:
		return "porep-synth"
	case C2:
		return "porep-c2"
	}
	return fmt.Sprintf("Shape(%d)", uint8(s))
}

func (s Shape) valid() error {
	if s >= numShapes {
		return fmt.Errorf("unknown shape %d", uint8(s))
	}
	return nil
}

func (s Shape) sha256Style() sha256.Style {
	if s == C2 {
		return sha256.Bellman
	}
	return sha256.Compact
}
