package porep

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Counts returns the shape counts of porep-synth at target (no matrices:
// r1cs.System.Counts' form) without compiling or building an instance: the
// layout, the segment sizes (probes cached per depth) and the head and
// tail, which Define allocates around the segments. r1cs.Compile of any
// instance has these counts (tested). Columns bounds the compile's column
// densities from above by a few hundred columns (see density).
func Counts(target int) (*r1cs.System, error) { return Synth.Counts(target) }

// Counts is the package's Counts for shape s.
func (s Shape) Counts(target int) (*r1cs.System, error) {
	l, err := s.Plan(target)
	if err != nil {
		return nil, err
	}
	sz, err := sizesOf(l)
	if err != nil {
		return nil, fmt.Errorf("porep-synth %d: %w", target, err)
	}
	private := 1 // comm_r_last
	if l.Labelled > 0 {
		private += replicaCost - 1 // the replica id's bits; the packing equality allocates none
	}
	private += l.Labelled*sz.labelled.private + (l.Challenges-l.Labelled)*sz.plain.private + sz.columns.private
	private += poseidon.Width3().Constraints() // comm_r's permutation: one private variable per constraint
	d, err := density(l, l.Publics()+private)
	if err != nil {
		return nil, fmt.Errorf("porep-synth %d: %w", target, err)
	}
	return &r1cs.System{NbPublic: l.Publics(), NbPrivate: private, NbConstraints: l.Constraints(), Columns: &d}, nil
}
