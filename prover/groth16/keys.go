package groth16

import (
	"errors"
	"fmt"
	"io"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ProvingKey holds the prover's share of the common reference string for one
// circuit shape. A and B omit the points at infinity (variables that never
// appear in that matrix); InfinityA/InfinityB say which, so the prover
// drops the matching wire values before the MSM, as gnark does. A ProvingKey
// is immutable once built and safe for concurrent provers.
type ProvingKey struct {
	// DomainSize is n, the size of the evaluation domain (a power of two).
	DomainSize int
	// NbPublic counts the publics (One included); NbPrivate the witnesses.
	NbPublic, NbPrivate int

	G1 struct {
		Alpha, Beta, Delta bls12381.G1Affine
		A                  []bls12381.G1Affine // [u_j(τ)], j with u_j ≠ 0
		B                  []bls12381.G1Affine // [v_j(τ)], j with v_j ≠ 0
		L                  []bls12381.G1Affine // [(βu_j+αv_j+w_j)/δ], private j
		H                  []bls12381.G1Affine // [τ^i·Z(τ)/δ], i < n−1
	}
	// lh is L followed by H in one array; Setup and ReadFrom make L and H
	// views of it so that Prove sums both with a single MSM.
	lh []bls12381.G1Affine
	G2 struct {
		Beta, Delta bls12381.G2Affine
		B           []bls12381.G2Affine // [v_j(τ)], j with v_j ≠ 0
	}

	// InfinityA[j] (InfinityB[j]) is true when u_j (v_j) is the zero
	// polynomial; len = NbPublic + NbPrivate.
	InfinityA, InfinityB []bool
}

// lhBases returns L‖H as one slice when L and H are adjacent views of pk.lh,
// as in keys from Setup and ReadFrom; ok is false for keys built otherwise.
func (pk *ProvingKey) lhBases() (lh []bls12381.G1Affine, ok bool) {
	nl, nh := len(pk.G1.L), len(pk.G1.H)
	if len(pk.lh) != nl+nh || nh == 0 || &pk.lh[nl] != &pk.G1.H[0] || (nl > 0 && &pk.lh[0] != &pk.G1.L[0]) {
		return nil, false
	}
	return pk.lh, true
}

// SetLH makes pk.G1.L and pk.G1.H views of lh (nbPrivate + DomainSize − 1
// points: L, then H), as keys from Setup and ReadFrom hold them, so that
// Prove computes one MSM over L‖H (and a QuotientLHBackend its fused call).
// It is for keys built by hand, such as benchmarks' synthetic keys; set
// NbPrivate first. It must not be called while the key is in use.
func (pk *ProvingKey) SetLH(lh []bls12381.G1Affine) { pk.setLH(lh) }

// setLH makes L and H views of lh (len nbPrivate + n − 1).
func (pk *ProvingKey) setLH(lh []bls12381.G1Affine) {
	pk.lh = lh
	pk.G1.L = lh[:pk.NbPrivate:pk.NbPrivate]
	pk.G1.H = lh[pk.NbPrivate:]
}

// NbVariables is the length of the full assignment.
func (pk *ProvingKey) NbVariables() int { return pk.NbPublic + pk.NbPrivate }

// VerifyingKey holds the verifier's share of the common reference string.
type VerifyingKey struct {
	G1 struct {
		Alpha bls12381.G1Affine
		// IC[k] = [(βu_k+αv_k+w_k)/γ] for public k (IC[0] belongs to One).
		IC []bls12381.G1Affine
	}
	G2 struct {
		Beta, Gamma, Delta bls12381.G2Affine
	}
}

// NbPublicInputs is the number of public inputs a proof is verified against
// (One excluded).
func (vk *VerifyingKey) NbPublicInputs() int { return len(vk.G1.IC) - 1 }

// Proof is a Groth16 proof: A ∈ G1, B ∈ G2, C ∈ G1.
type Proof struct {
	A bls12381.G1Affine
	B bls12381.G2Affine
	C bls12381.G1Affine
}

// ErrInvalidProof is returned by Verify when the pairing check fails or the
// proof's points are not valid group elements.
var ErrInvalidProof = errors.New("groth16: invalid proof")

// randomScalar draws a uniformly distributed nonzero scalar from rnd: 64
// bytes reduced modulo r (the bias is below 2^-250).
func randomScalar(rnd io.Reader) (fr.Element, error) {
	var buf [64]byte
	for {
		if _, err := io.ReadFull(rnd, buf[:]); err != nil {
			return fr.Element{}, fmt.Errorf("read randomness: %w", err)
		}
		var e fr.Element
		e.SetBytes(buf[:])
		if !e.IsZero() {
			return e, nil
		}
	}
}
