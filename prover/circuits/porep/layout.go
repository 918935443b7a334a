package porep

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/merkle"
	"github.com/cuzk-dev/cuzk/prover/circuits/poseidon"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Size limits of porep-synth.
const (
	MinTarget = 1 << 10
	MaxTarget = 1 << 27
)

// labelShare is the fraction of the target spent on labelled challenges
// (their labels and inclusion proofs). A labelled challenge's wires are
// about 96 % bits, the rest of the circuit's almost none, so 94 % of the
// rows give about 90 % bits, a PoRep C2 witness's share.
const labelShare = 0.94

// Parents is the number of parent labels a node's label hashes, SDR's base
// degree; with the replica id and the node they make a 232-byte message,
// four SHA-256 blocks once padded.
const Parents = 6

// labelBytes is the size of a label's preimage.
const labelBytes = 32 + 8 + 32*Parents

// Layout is the shape of one porep-synth instance.
type Layout struct {
	Shape      Shape
	Target     int // requested size: constraints + public inputs ≤ Target
	Depth      int // levels of the 8-ary tree
	Challenges int // inclusion proofs, the first Labelled of them with SHA-256 labels
	Labelled   int
	Fill       [3]int // column hashes of width 9, 5 and 3
}

// Publics is the number of public variables, One included.
func (l Layout) Publics() int { return 3 + l.Challenges }

// Constraints is the exact constraint count of the circuit for l.
func (l Layout) Constraints() int {
	n := l.Challenges*challengeCost(l.Depth) + commRCost() + fillCost(l.Fill)
	if l.Labelled > 0 {
		n += replicaCost + l.Labelled*labelCost(l.Shape)
	}
	return n
}

// Rows is constraints plus public-input rows, what the domain must hold.
func (l Layout) Rows() int { return l.Constraints() + l.Publics() }

var fillWidths = [3]func() *poseidon.Params{poseidon.Width9, poseidon.Width5, poseidon.Width3}

// replicaCost is the replica id's bits and their packing equality.
const replicaCost = 254 + 1

// commRCost is Poseidon_3(comm_c, comm_r_last) and its equality with comm_r.
func commRCost() int { return poseidon.Width3().Constraints() + 1 }

// challengeCost is one inclusion proof with its root and index equalities.
func challengeCost(depth int) int {
	return depth*merkle.LevelConstraints(poseidon.Width9()) + 2
}

func fillCost(fill [3]int) int {
	n := 0
	for i, k := range fill {
		n += k * fillWidths[i]().Constraints()
	}
	return n
}

// labelCosts caches, per shape, the extra cost of a labelled challenge,
// measured once by compiling the label gadget alone.
var labelCosts = [numShapes]func() int{
	sync.OnceValue(func() int { return probeLabel(Synth) }),
	sync.OnceValue(func() int { return probeLabel(C2) }),
}

func labelCost(s Shape) int { return labelCosts[s]() }

func probeLabel(s Shape) int {
	sys, err := r1cs.Compile(labelProbe{s})
	if err != nil {
		panic(fmt.Sprintf("porep: compile %s label probe: %v", s, err))
	}
	return sys.NbConstraints - (replicaCost - 1) // minus the probe's replica id bits
}

type labelProbe struct{ shape Shape }

func (p labelProbe) Define(api r1cs.API) error {
	replica := allocReplica(api, [32]byte{})
	labelGadget(api, p.shape, replica, 0, api.Public(fr.Element{}), [Parents][32]byte{})
	return nil
}

// Plan chooses the Synth layout for target constraints (rows, public
// inputs included), MinTarget ≤ target ≤ MaxTarget.
func Plan(target int) (Layout, error) { return Synth.Plan(target) }

// Plan chooses the layout of shape s for target constraints (rows, public
// inputs included), MinTarget ≤ target ≤ MaxTarget.
func (s Shape) Plan(target int) (Layout, error) {
	if err := s.valid(); err != nil {
		return Layout{}, fmt.Errorf("porep plan: %w", err)
	}
	if target < MinTarget || target > MaxTarget {
		return Layout{}, fmt.Errorf("porep plan: target %d outside [%d, %d]", target, MinTarget, MaxTarget)
	}
	l := Layout{Shape: s, Target: target, Depth: min(max((bits.Len(uint(target))-1-7)/2, 1), 10)}
	per := challengeCost(l.Depth) + 1 // its public input row too
	if lab := labelCost(s) + per; float64(target)*labelShare >= float64(lab+replicaCost) {
		// The nearest count to the share, as a label is a large step
		// (about a tenth of 2^20), within what the target holds.
		room := (target - replicaCost - l.Rows()) / lab
		l.Labelled = min(int(math.Round((float64(target)*labelShare-replicaCost)/float64(lab))), room)
		l.Challenges = l.Labelled
	}
	for l.Rows()+per <= target {
		l.Challenges++
	}
	most := l.Challenges
	// Trading the last few proofs for column hashes can fit the target
	// more tightly.
	best := Layout{}
	for n := most; n >= max(most-3, l.Labelled, 1); n-- {
		cand := l
		cand.Challenges = n
		cand.Fill = bestFill(target - cand.Rows())
		if best.Challenges == 0 || cand.Rows() > best.Rows() {
			best = cand
		}
	}
	if best.Challenges == 0 {
		return Layout{}, fmt.Errorf("porep plan: target %d too small for one depth-%d proof", target, l.Depth)
	}
	return best, nil
}

// bestFill returns the mix of column hashes (widths 9, 5, 3) that leaves
// the least of budget unused.
func bestFill(budget int) [3]int {
	c9, c5, c3 := fillWidths[0]().Constraints(), fillWidths[1]().Constraints(), fillWidths[2]().Constraints()
	var best [3]int
	bestLeft := budget
	for k5 := 0; k5 <= 4; k5++ {
		for k3 := 0; k3 <= 6; k3++ {
			rest := budget - k5*c5 - k3*c3
			if rest < 0 {
				continue
			}
			k9 := rest / c9
			if left := rest - k9*c9; left < bestLeft {
				best, bestLeft = [3]int{k9, k5, k3}, left
			}
		}
	}
	return best
}
