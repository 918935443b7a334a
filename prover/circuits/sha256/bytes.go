package sha256

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// AllocBytes allocates the bits of data as private boolean variables (one
// constraint each), most significant bit of each byte first.
func AllocBytes(api r1cs.API, data []byte) []Bit {
	g := newGates(api)
	out := make([]Bit, 0, 8*len(data))
	for _, x := range data {
		for i := 7; i >= 0; i-- {
			out = append(out, g.allocBit(x>>i&1 == 1))
		}
	}
	return out
}

// BitsToBytes returns the values of bits (a multiple of 8, FIPS order).
func BitsToBytes(bits []Bit) []byte {
	out := make([]byte, len(bits)/8)
	for i, b := range bits {
		if b.value {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

// Pack returns Σ 2^i·bits[i] as a linear combination: bits[0] is the least
// significant. It needs len(bits) < 255 so the value stays below p.
func Pack(bits []Bit) r1cs.LC {
	var lc r1cs.LC
	var c fr.Element
	c.SetOne()
	for _, b := range bits {
		lc = b.appendTo(lc, &c)
		c.Double(&c)
	}
	return lc
}
