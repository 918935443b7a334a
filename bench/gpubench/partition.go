package gpubench

import (
	"fmt"
	"strings"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// PartitionConfig configures the partition benchmark.
type PartitionConfig struct {
	Shape Shape
	Runs  int    // timed runs after the warm-up run
	Seed  uint64 // of the random bases and vectors
	Tile  int    // distinct random points tiled into the bases
	Check bool   // check the warm-up results against gnark-crypto
	Bits  float64
	Pin   PinSet // which vectors live in pinned host memory
	// HOnDevice fuses the quotient with the L‖H MSM (h stays on the GPU).
	HOnDevice bool
}

// PinSet says which of a partition's vectors are in pinned host memory.
type PinSet int

// The pin sets, from none to all.
const (
	PinNone    PinSet = iota
	PinScalars        // Prove's workspace: wires ‖ h and the compactions, every MSM's scalars
	PinAll            // also a, b, c
)

// PinNames are the pin sets' names, by value.
var PinNames = []string{"none", "scalars", "all"}

// ParsePinSet reads a pin set's name.
func ParsePinSet(s string) (PinSet, error) {
	for i, n := range PinNames {
		if s == n {
			return PinSet(i), nil
		}
	}
	return 0, fmt.Errorf("pin set %q: want one of %s", s, strings.Join(PinNames, ", "))
}

// String is the pin set's name.
func (p PinSet) String() string { return PinNames[p] }

// Partition is the synthetic key and inputs of one partition: a key whose
// bases are a tile of random points repeated (L and H adjacent, as Setup
// makes them), one public and Wires − 1 private wires of which the first
// BWires are those of the B MSMs, and a, b random with c = a·b pointwise,
// as for a satisfied circuit. Only what Prove reads is set; the key has no
// trapdoor, so its proofs do not verify: RunPartition checks the MSMs.
type Partition struct {
	PK      *groth16.ProvingKey
	G1Tile  []bls12381.G1Affine
	G2Tile  []bls12381.G2Affine
	Wire    []fr.Element // public ‖ private
	A, B, C []fr.Element
	pinAll  bool
}

// NewPartition makes the key and the vectors; with cfg.Pin == PinAll, a,
// b and c come from host (freed with it).
func NewPartition(cfg PartitionConfig, host groth16.HostAllocator) (*Partition, error) {
	s := cfg.Shape
	p := &Partition{G1Tile: benchinput.RandomG1(cfg.Tile, cfg.Seed+1), G2Tile: benchinput.RandomG2(cfg.Tile, cfg.Seed+2),
		pinAll: cfg.Pin == PinAll}
	p.PK = syntheticKey(s, p.G1Tile, p.G2Tile)
	for _, v := range []*[]fr.Element{&p.A, &p.B, &p.C} {
		if !p.pinAll {
			*v = make([]fr.Element, s.N())
			continue
		}
		var err error
		if *v, _, err = groth16.AllocVector(host, s.N()); err != nil { // freed with the backend
			return nil, fmt.Errorf("partition inputs: %w", err)
		}
	}
	benchinput.FillRandom(p.A, cfg.Seed+3)
	benchinput.FillRandom(p.B, cfg.Seed+4)
	benchinput.ParallelFor(s.N(), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			p.C[i].Mul(&p.A[i], &p.B[i])
		}
	})
	p.Wire = benchinput.RandomScalars(s.Wires, cfg.Seed+5)
	benchinput.SetBits(p.Wire, cfg.Bits, cfg.Seed+6)
	return p, nil
}

// syntheticKey returns a key of shape s over the tiles: A over every wire,
// B over the first s.BWires (the others at infinity), L‖H adjacent.
func syntheticKey(s Shape, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine) *groth16.ProvingKey {
	pk := &groth16.ProvingKey{DomainSize: s.N(), NbPublic: 1, NbPrivate: s.Wires - 1}
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = g1[0], g1[1%len(g1)], g1[2%len(g1)]
	pk.G2.Beta, pk.G2.Delta = g2[0], g2[1%len(g2)]
	pk.InfinityA = make([]bool, s.Wires)
	pk.InfinityB = make([]bool, s.Wires)
	for i := s.BWires; i < s.Wires; i++ {
		pk.InfinityB[i] = true
	}
	pk.G1.A = benchinput.Tiled(g1, s.Wires)
	pk.G1.B = benchinput.Tiled(g1, s.BWires)
	pk.G2.B = benchinput.Tiled(g2, s.BWires)
	pk.SetLH(benchinput.Tiled(g1, s.LH()))
	return pk
}

// Assignment returns the partition's inputs as Prove takes them (views of
// p's vectors, which Prove may overwrite: a takes h on the host path).
func (p *Partition) Assignment() *r1cs.Assignment {
	return &r1cs.Assignment{Public: p.Wire[:1:1], Private: p.Wire[1:], A: p.A, B: p.B, C: p.C}
}
