package sha256

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// BlockBits is the size of one message block in bits.
const BlockBits = 512

// iv is H^(0) of FIPS 180-4 §5.3.3.
var iv = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// roundK is K of FIPS 180-4 §4.2.2.
var roundK = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// IV returns the initial hash value as constant words.
func IV() [8]Word {
	var s [8]Word
	for i, x := range iv {
		s[i] = ConstWord(x)
	}
	return s
}

// Pad appends the FIPS 180-4 §5.1.1 padding to a message of len(msg) bits:
// a 1 bit, zeros, and the 64-bit big-endian length, to a multiple of 512.
func Pad(msg []Bit) []Bit {
	n := len(msg)
	padded := make([]Bit, 0, (n+64+1+BlockBits-1)/BlockBits*BlockBits)
	padded = append(padded, msg...)
	padded = append(padded, ConstBit(true))
	for len(padded)%BlockBits != BlockBits-64 {
		padded = append(padded, ConstBit(false))
	}
	for i := 63; i >= 0; i-- {
		padded = append(padded, ConstBit(uint64(n)>>i&1 == 1))
	}
	return padded
}

// Sum returns the 256 digest bits of the message msg (bits in FIPS order:
// most significant bit of each byte first), padding included.
func Sum(api r1cs.API, msg []Bit) []Bit { return Compact.Sum(api, msg) }

func (g *gates) sum(msg []Bit) []Bit {
	api := g.api
	defer api.Namespace("sha256")()
	padded := Pad(msg)
	state := IV()
	for b := 0; b < len(padded); b += BlockBits {
		pop := api.Namespace(fmt.Sprintf("block%d", b/BlockBits))
		state = g.compress(state, padded[b:b+BlockBits])
		pop()
	}
	out := make([]Bit, 0, 256)
	for _, w := range state {
		out = append(out, wordToBits(w)...)
	}
	return out
}

// Compress applies the compression function to state and one 512-bit block
// (FIPS bit order) and returns the new chaining state.
func Compress(api r1cs.API, state [8]Word, block []Bit) [8]Word {
	return Compact.Compress(api, state, block)
}

func (gt *gates) compress(state [8]Word, block []Bit) [8]Word {
	var w [64]Word
	for t := 0; t < 16; t++ {
		w[t] = bitsToWord(block[32*t : 32*t+32])
	}
	for t := 16; t < 64; t++ {
		s0 := gt.xor3(w[t-15].rotr(7), w[t-15].rotr(18), w[t-15].shr(3))
		s1 := gt.xor3(w[t-2].rotr(17), w[t-2].rotr(19), w[t-2].shr(10))
		w[t] = gt.add(0, s1, w[t-7], s0, w[t-16])
	}
	a, b, c, d, e, f, g, h := state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
	for t := 0; t < 64; t++ {
		s1 := gt.xor3(e.rotr(6), e.rotr(11), e.rotr(25))
		var ch Word
		for i := range ch {
			ch[i] = gt.ch(e[i], f[i], g[i])
		}
		s0 := gt.xor3(a.rotr(2), a.rotr(13), a.rotr(22))
		var maj Word
		for i := range maj {
			maj[i] = gt.maj(a[i], b[i], c[i])
		}
		newE := gt.add(roundK[t], d, h, s1, ch, w[t])
		newA := gt.add(roundK[t], h, s1, ch, w[t], s0, maj)
		h, g, f, e, d, c, b, a = g, f, e, newE, c, b, a, newA
	}
	final := [8]Word{a, b, c, d, e, f, g, h}
	for i := range final {
		final[i] = gt.add(0, state[i], final[i])
	}
	return final
}

// bitsToWord reads 32 bits, most significant first, into a Word.
func bitsToWord(bits []Bit) Word {
	var w Word
	for i := range w {
		w[i] = bits[31-i]
	}
	return w
}

// wordToBits writes w most significant bit first.
func wordToBits(w Word) []Bit {
	out := make([]Bit, 32)
	for i := range out {
		out[i] = w[31-i]
	}
	return out
}
