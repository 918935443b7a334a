package groth16

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Verify checks proof against vk and the public inputs (One excluded, in
// creation order). It returns nil for a valid proof and an error wrapping
// ErrInvalidProof for an invalid one; other errors mean the call was malformed.
// Verify is safe for concurrent use.
func Verify(vk *VerifyingKey, proof *Proof, publicInputs []fr.Element) error {
	if len(publicInputs) != vk.NbPublicInputs() {
		return fmt.Errorf("verify: %d public inputs, key expects %d", len(publicInputs), vk.NbPublicInputs())
	}
	if !proof.A.IsInSubGroup() || !proof.B.IsInSubGroup() || !proof.C.IsInSubGroup() {
		return fmt.Errorf("verify: proof point outside the prime-order subgroup: %w", ErrInvalidProof)
	}
	var kSum bls12381.G1Jac
	kSum.FromAffine(&vk.G1.IC[0])
	if len(publicInputs) > 0 {
		var acc bls12381.G1Jac
		if _, err := acc.MultiExp(vk.G1.IC[1:], publicInputs, ecc.MultiExpConfig{}); err != nil {
			return fmt.Errorf("verify: public input sum: %w", err)
		}
		kSum.AddAssign(&acc)
	}
	var kAff, negAlpha, negK, negC bls12381.G1Affine
	kAff.FromJacobian(&kSum)
	negAlpha.Neg(&vk.G1.Alpha)
	negK.Neg(&kAff)
	negC.Neg(&proof.C)
	// e(A,B) = e(α,β)·e(K,γ)·e(C,δ) ⇔ e(A,B)·e(−α,β)·e(−K,γ)·e(−C,δ) = 1.
	ok, err := bls12381.PairingCheck(
		[]bls12381.G1Affine{proof.A, negAlpha, negK, negC},
		[]bls12381.G2Affine{proof.B, vk.G2.Beta, vk.G2.Gamma, vk.G2.Delta},
	)
	if err != nil {
		return fmt.Errorf("verify: pairing: %w", err)
	}
	if !ok {
		return fmt.Errorf("verify: pairing check failed: %w", ErrInvalidProof)
	}
	return nil
}
