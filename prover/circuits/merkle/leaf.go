package merkle

import (
	stdsha256 "crypto/sha256"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/sha256"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// leafBits is how many digest bits a truncated leaf keeps: 254, so that
// every leaf is below the 255-bit modulus.
const leafBits = 254

// TruncatedSHA256 maps SHA-256(data) to a field element the way Filecoin
// does for its tree leaves: the digest read as a little-endian integer with
// its two most significant bits (the top of byte 31) cleared.
func TruncatedSHA256(data []byte) fr.Element {
	d := stdsha256.Sum256(data)
	d[31] &= 0x3f
	slices.Reverse(d[:])
	var e fr.Element
	e.SetBytes(d[:])
	return e
}

// TruncatedSHA256Gadget is the gadget of TruncatedSHA256 on message bits in
// FIPS order: the sha256 gadget followed by a free repacking of 254 of the
// digest bits.
func TruncatedSHA256Gadget(api r1cs.API, data []sha256.Bit) r1cs.LC {
	return TruncatedSHA256GadgetStyle(api, sha256.Compact, data)
}

// TruncatedSHA256GadgetStyle is TruncatedSHA256Gadget with the SHA-256
// gadget in style.
func TruncatedSHA256GadgetStyle(api r1cs.API, style sha256.Style, data []sha256.Bit) r1cs.LC {
	digest := style.Sum(api, data)
	le := make([]sha256.Bit, 0, leafBits)
	for i := 0; i < leafBits; i++ {
		// little-endian bit i is bit i%8 (from the least significant) of byte i/8
		le = append(le, digest[8*(i/8)+7-i%8])
	}
	return sha256.Pack(le)
}
