package keyfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Fingerprint identifies the setup a key was made by: the SHA-256 of the
// setup's α in G1 and β and δ in G2 (compressed), the three points a
// proving key and its verifying key both hold. A setup draws them at
// random, so keys of two setups differ in it; a .rawpk (or .pk) and a .vk
// whose fingerprints differ cannot make a proof that verifies. It needs no
// field in either file: each already carries its setup's points.
type Fingerprint [sha256.Size]byte

// String is the fingerprint's first 8 bytes in hex, enough to tell setups
// apart in a message.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:8]) }

func fingerprint(alpha *bls12381.G1Affine, beta, delta *bls12381.G2Affine) Fingerprint {
	h := sha256.New()
	a, b, d := alpha.Bytes(), beta.Bytes(), delta.Bytes()
	h.Write(a[:])
	h.Write(b[:])
	h.Write(d[:])
	var f Fingerprint
	h.Sum(f[:0])
	return f
}

// PKFingerprint is the fingerprint of pk's setup.
func PKFingerprint(pk *groth16.ProvingKey) Fingerprint {
	return fingerprint(&pk.G1.Alpha, &pk.G2.Beta, &pk.G2.Delta)
}

// VKFingerprint is the fingerprint of vk's setup.
func VKFingerprint(vk *groth16.VerifyingKey) Fingerprint {
	return fingerprint(&vk.G1.Alpha, &vk.G2.Beta, &vk.G2.Delta)
}

// ErrNotAPair is wrapped by CheckPair's refusal of keys of two setups or
// of two circuits.
var ErrNotAPair = errors.New("the proving and verifying keys are not one pair")

// CheckPair checks that pk (read from pkPath) and vk (from vkPath) come
// from one setup (their fingerprints agree) and have as many public
// inputs: a pair that fails it makes proofs that never verify. The error
// names both files and both fingerprints.
func CheckPair(pkPath string, pk *groth16.ProvingKey, vkPath string, vk *groth16.VerifyingKey) error {
	pf, vf := PKFingerprint(pk), VKFingerprint(vk)
	if pf != vf {
		return fmt.Errorf("%w: %s is of setup %s, %s of setup %s", ErrNotAPair, pkPath, pf, vkPath, vf)
	}
	if n := len(vk.G1.IC); n != pk.NbPublic { // NbPublic counts One, as IC does
		return fmt.Errorf("%w: %s has %d public inputs, %s has %d", ErrNotAPair, pkPath, pk.NbPublic-1, vkPath, n-1)
	}
	return nil
}
