package groth16

import (
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Point sizes in memory (and in a raw key file): affine coordinates in
// Montgomery form, no compression.
const (
	G1Bytes = int64(unsafe.Sizeof(bls12381.G1Affine{}))
	G2Bytes = int64(unsafe.Sizeof(bls12381.G2Affine{}))
)

// KeySize is the shape of a proving key: its counts and the points of each
// section, as Setup lays them out. G1: A (one point per column of A), B
// (one per column of B), L (one per private variable) and H (DomainSize−1);
// G2: B again. It sizes a key before it exists (SizeFor) and after
// (SizeOf); a key Setup makes for a System has exactly SizeFor's size when
// the density is the System's own (r1cs.System.Density), unless a column's
// coefficients cancel out, which only shrinks it.
type KeySize struct {
	NbPublic, NbPrivate, DomainSize int
	A, B                            int // points of G1 A and of B (each curve)
}

// SizeFor is the size of sys's key when its matrices have density d.
func SizeFor(sys *r1cs.System, d r1cs.Density) KeySize {
	return KeySize{NbPublic: sys.NbPublic, NbPrivate: sys.NbPrivate, DomainSize: sys.DomainSize(), A: d.A, B: d.B}
}

// SizeOf is pk's size.
func SizeOf(pk *ProvingKey) KeySize {
	return KeySize{NbPublic: pk.NbPublic, NbPrivate: pk.NbPrivate, DomainSize: pk.DomainSize, A: len(pk.G1.A), B: len(pk.G1.B)}
}

// H is the number of points of G1 H.
func (s KeySize) H() int { return max(s.DomainSize-1, 0) }

// G1Points counts the key's G1 bases (A, B, L, H).
func (s KeySize) G1Points() int64 { return int64(s.A) + int64(s.B) + int64(s.NbPrivate) + int64(s.H()) }

// G2Points counts the key's G2 bases (B).
func (s KeySize) G2Points() int64 { return int64(s.B) }

// Bytes is the memory of the key's bases: what a host copy of its points
// and a device holding them take (the masks and single points aside).
func (s KeySize) Bytes() int64 { return s.G1Points()*G1Bytes + s.G2Points()*G2Bytes }

// SetupScratchBytes bounds the scalar vectors SetupWith holds at once
// beside the key it builds: L_i(τ) over the domain, the column sums of A, B
// and C over every variable, then the G1 and the G2 scalar batches handed
// to the FixedBaser (one element per point). It leaves out the
// constraint system itself and whatever the FixedBaser allocates.
func (s KeySize) SetupScratchBytes() int64 {
	wires := int64(s.NbPublic) + int64(s.NbPrivate)
	elems := int64(s.DomainSize) + 3*wires + s.G1Points() + s.G2Points() + 8 // + α, β, δ, γ and the other single points
	return elems * int64(unsafe.Sizeof(fr.Element{}))
}
